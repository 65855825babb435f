import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { notFound } from '@outbox/runtime/problem';
import type { RequestHandler } from 'express';

const runbooksFile = join(import.meta.dirname, '..', '..', '..', 'docs', 'runbooks.md');

/**
 * `GET /runbooks/<anchor>`: one alert's section of docs/runbooks.md, as the Markdown it is written
 * in. Each alert's `runbook_url` annotation names its section (`docs/runbooks.md#<alert>`); the
 * alerts panel links here, so the runbook opens from the console without a repository host.
 */
export function runbookHandler(): RequestHandler {
  const sections = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync(runbooksFile, 'utf8');
  } catch {
    // not shipped (a trimmed image): every link answers 404 with a pointer to the docs
  }
  const parts = text.split(/^(?=## )/m);
  for (const part of parts) {
    const heading = /^## (.+)$/m.exec(part)?.[1];
    if (heading)
      sections.set(
        heading
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-'),
        part.trimEnd(),
      );
  }
  return (req, res, next) => {
    const section = sections.get(String(req.params.anchor));
    if (!section) return next(notFound(`No runbook section ${req.params.anchor}; see docs/runbooks.md.`));
    res.type('text/plain; charset=utf-8').set('cache-control', 'no-cache').send(`${section}\n`);
  };
}
