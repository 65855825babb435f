import { isUtf8 } from 'node:buffer';
import { type FieldError, HttpProblem } from '@outbox/runtime/problem';
import express, { type RequestHandler } from 'express';
import { toPointer } from './problem.ts';

/** Orders bodies are small; anything bigger is a mistake or an attack. */
const BODY_LIMIT = '32kb';

/**
 * express.json, strict about bytes: JSON is UTF-8 (RFC 8259 §8.1), so another charset is refused
 * (415), and bytes that are not UTF-8 are refused (400) instead of being decoded into U+FFFD and
 * stored as if the client had sent them. The refusal names the fields that held the bad bytes.
 * body-parser passes what `verify` throws on to the error handler as it is (http-errors keeps an
 * error's own status and type), so the problems thrown here are answered as they are.
 */
export function jsonBody(): RequestHandler {
  return express.json({
    limit: BODY_LIMIT,
    verify: (_req, _res, buffer, encoding) => {
      if (encoding.toLowerCase() !== 'utf-8') {
        throw new HttpProblem(
          415,
          'Unsupported charset',
          `unsupported charset "${encoding}": send UTF-8 JSON`,
          {
            type: 'urn:problem:unsupported-charset',
          },
        );
      }
      if (!isUtf8(buffer)) {
        throw new HttpProblem(400, 'Body is not valid UTF-8', 'The request body is not valid UTF-8.', {
          type: 'urn:problem:validation',
          errors: fieldsWithBadBytes(buffer),
        });
      }
    },
  });
}

/** Where the bad bytes are: the strings (keys or values) that decode to U+FFFD. */
function fieldsWithBadBytes(buffer: Buffer): FieldError[] {
  const detail = 'not valid UTF-8';
  let body: unknown;
  try {
    body = JSON.parse(buffer.toString('utf8'));
  } catch {
    return [{ pointer: '#', detail }];
  }
  const found: FieldError[] = [];
  const walk = (value: unknown, path: PropertyKey[]) => {
    if (typeof value === 'string') {
      if (value.includes('\uFFFD')) found.push({ pointer: toPointer(path), detail });
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key.includes('\uFFFD')) found.push({ pointer: toPointer([...path, key]), detail });
        else walk(child, [...path, Array.isArray(value) ? Number(key) : key]);
      }
    }
  };
  walk(body, []);
  return found.length > 0 ? found : [{ pointer: '#', detail }];
}
