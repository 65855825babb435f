// Bad input, by class: for each class of client error a table of inputs, each answered with a 4xx
// problem+json (never a 500, never a bare answer without a body) that writes nothing. The classes:
// what the HTTP stack itself refuses (charsets, content encodings, framing, media types, malformed
// JSON, percent-encoding in a path, malformed HTTP), text that is not valid Unicode (refused and
// named, never altered and stored), and paging cursors whose decoded values are out of range.

import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
let port: number;
beforeAll(async () => {
  api = await startOrdersApi('orders_bad_input');
  port = Number(new URL(api.baseUrl).port);
});
afterAll(() => api?.close());

// --- helpers ---------------------------------------------------------------------------------

type Answer = { status: number; headers: Record<string, string>; body: string };
type Problem = { type: string; title: string; status: number; detail: string; errors?: FieldError[] };
type FieldError = { pointer?: string; parameter?: string; detail: string };

/**
 * Send exactly these bytes on a fresh connection and read the answer until the server closes it.
 * Raw, because fetch would refuse or repair much of what these tests must send.
 */
function sendRaw(bytes: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer within 20 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

function request(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body: Buffer | string = '',
): Promise<Answer> {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (method !== 'GET' && !('content-length' in headers) && !('transfer-encoding' in headers)) {
    lines.push(`content-length: ${payload.length}`);
  }
  return sendRaw(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), payload]));
}

const validOrder = { customerId: 'customer-1', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] };
const VALID = JSON.stringify(validOrder);
const JSON_TYPE = { 'content-type': 'application/json' };
const postOrders = (headers: Record<string, string>, body: Buffer | string) =>
  request('POST', '/orders', headers, body);

async function rowCounts() {
  const [row] = await queryOnce<{ orders: number; outbox: number; keys: number }>(
    api.db.url,
    `select (select count(*) from orders)::int as orders, (select count(*) from outbox)::int as outbox,
            (select count(*) from idempotency_keys)::int as keys`,
  );
  return row;
}

/** The answer is the expected 4xx problem+json, and nothing was written. */
async function expectProblem(send: () => Promise<Answer>, status: number, type?: string): Promise<Problem> {
  const before = await rowCounts();
  const answer = await send();
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
  const problem = JSON.parse(answer.body) as Problem;
  expect(problem.status).toBe(status);
  if (type) expect(problem.type).toBe(type);
  expect(problem.title).toEqual(expect.any(String));
  expect(problem.detail).toEqual(expect.any(String));
  expect(await rowCounts()).toEqual(before);
  return problem;
}

// --- what the HTTP stack refuses --------------------------------------------------------------

describe('a body in a charset or content encoding the API does not read gets a 415 problem', () => {
  it.each([
    ['charset=latin1', { 'content-type': 'application/json; charset=latin1' }, VALID],
    ['charset=iso-8859-1', { 'content-type': 'application/json; charset=iso-8859-1' }, VALID],
    ['an unknown charset', { 'content-type': 'application/json; charset=klingon' }, VALID],
    ['charset=utf-16 (JSON is UTF-8)', { 'content-type': 'application/json; charset=utf-16' }, VALID],
    ['an unknown Content-Encoding', { ...JSON_TYPE, 'content-encoding': 'zstd-ish' }, VALID],
    ['two stacked encodings', { ...JSON_TYPE, 'content-encoding': 'gzip, gzip' }, gzipSync(gzipSync(VALID))],
  ])('%s', async (_name, headers, body) => {
    await expectProblem(() => postOrders(headers, body), 415);
  });
});

describe('a body that cannot be read gets a 4xx problem', () => {
  it.each([
    ['brotli that is not brotli', { ...JSON_TYPE, 'content-encoding': 'br' }, VALID, 400],
    ['gzip that is not gzip', { ...JSON_TYPE, 'content-encoding': 'gzip' }, VALID, 400],
    ['deflate that is not deflate', { ...JSON_TYPE, 'content-encoding': 'deflate' }, VALID, 400],
    ['truncated gzip', { ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync(VALID).subarray(0, 20), 400],
    ['a body over 32 kB', JSON_TYPE, JSON.stringify({ ...validOrder, customerId: 'x'.repeat(40_000) }), 413],
    [
      'a gzip bomb (inflates over 32 kB)',
      { ...JSON_TYPE, 'content-encoding': 'gzip' },
      gzipSync(JSON.stringify({ ...validOrder, customerId: 'x'.repeat(200_000) })),
      413,
    ],
    [
      'a chunked body over 32 kB',
      { ...JSON_TYPE, 'transfer-encoding': 'chunked' },
      chunked('x'.repeat(40_000)),
      413,
    ],
    ['text/plain', { 'content-type': 'text/plain' }, VALID, 415],
    ['no Content-Type', {}, VALID, 415],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }, 'customerId=c', 415],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', 415],
    ['a Content-Type that is not a media type', { 'content-type': '///' }, VALID, 415],
  ])('%s', async (_name, headers, body, status) => {
    await expectProblem(() => postOrders(headers, body), status);
  });

  it('a deflate body that is valid is read (the encodings above are refused for what they are)', async () => {
    const answer = await postOrders({ ...JSON_TYPE, 'content-encoding': 'deflate' }, deflateSync(VALID));
    expect(answer.status, answer.body).toBe(201);
  });
});

function chunked(text: string): Buffer {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 4096) {
    const part = text.slice(i, i + 4096);
    chunks.push(`${part.length.toString(16)}\r\n${part}\r\n`);
  }
  return Buffer.from(`${chunks.join('')}0\r\n\r\n`);
}

describe('malformed JSON gets a 400 malformed-json problem', () => {
  it.each([
    ['an unterminated object', '{"customerId": "c", "currency": '],
    ['a trailing comma', `${VALID.slice(0, -1)},}`],
    ['single quotes', "{'customerId': 'c'}"],
    ['NaN', '{"customerId": NaN}'],
    ['a bare word', 'nope'],
    ['null', 'null'],
    ['a string', '"an order"'],
    ['two documents', `${VALID}${VALID}`],
  ])('%s', async (_name, body) => {
    await expectProblem(() => postOrders(JSON_TYPE, body), 400, 'urn:problem:malformed-json');
  });

  it('an empty body is an order with every field missing', async () => {
    const problem = await expectProblem(() => postOrders(JSON_TYPE, ''), 400, 'urn:problem:validation');
    expect(problem.errors?.length).toBeGreaterThan(0);
  });
});

describe('a path with malformed percent-encoding gets a 400 problem', () => {
  it.each([
    ['a non-hex escape', '/orders/%zz'],
    ['a truncated escape', '/orders/%E0%A4%A'],
    ['a lone percent sign', '/orders/%'],
    ['bytes that are not UTF-8', '/orders/%FF%FE'],
    ['an encoded surrogate', '/orders/%ED%A0%80'],
  ])('%s: GET %s', async (_name, path) => {
    await expectProblem(() => request('GET', path), 400);
  });
});

describe('a request Node cannot parse as HTTP gets a 4xx problem, not a bare answer', () => {
  const head = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  it.each([
    [
      'an invalid Transfer-Encoding',
      head(['POST /orders HTTP/1.1', 'host: x', 'transfer-encoding: chunked, gzip']),
      400,
    ],
    ['a malformed request line', head(['GET /orders HTTP/9', 'host: x']), 400],
    ['a header with a space in its name', head(['GET /orders HTTP/1.1', 'host: x', 'bad header: 1']), 400],
    ['a header with a control character', head(['GET /orders HTTP/1.1', 'host: x', 'x-a: b\u0001c']), 400],
    [
      'both Content-Length and chunked',
      head(['POST /orders HTTP/1.1', 'host: x', 'content-length: 3', 'transfer-encoding: chunked']),
      400,
    ],
    ['headers over 16 kB', head(['GET /orders HTTP/1.1', 'host: x', `x-big: ${'a'.repeat(20_000)}`]), 431],
  ])('%s', async (_name, bytes, status) => {
    const before = await rowCounts();
    const answer = await sendRaw(bytes);
    expect(answer.status, answer.body).toBe(status);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status, type: 'urn:problem:bad-request' });
    expect(await rowCounts()).toEqual(before);
  });
});

// --- text that is not valid Unicode ----------------------------------------------------------

describe('text that is not valid Unicode is refused with 400 naming the field, never stored', () => {
  // JSON escapes: valid JSON whose strings are not valid Unicode (a lone surrogate), or hold a NUL.
  const escaped = (customerId: string, sku = 'KB-101') =>
    `{"customerId":"${customerId}","currency":"EUR","items":[{"sku":"${sku}","quantity":1}]}`;
  it.each([
    ['a lone high surrogate', escaped('c\\ud800'), ['#/customerId']],
    ['a lone low surrogate', escaped('c\\udc00x'), ['#/customerId']],
    ['a reversed surrogate pair', escaped('\\udc00\\ud800'), ['#/customerId']],
    ['a lone surrogate in an item', escaped('c', 'KB-\\ud83d'), ['#/items/0/sku']],
    ['a NUL', escaped('c\\u0000'), ['#/customerId']],
    ['a NUL in an item', escaped('c', 'KB-\\u0000101'), ['#/items/0/sku']],
    ['a lone surrogate in an unknown key', `{"\\ud800":1,${VALID.slice(1)}`, ['#/%EF%BF%BD']],
  ])('%s (JSON escape)', async (_name, body, pointers) => {
    const problem = await expectProblem(() => postOrders(JSON_TYPE, body), 400, 'urn:problem:validation');
    expect(problem.errors?.map((error) => error.pointer)).toEqual(pointers);
  });

  // Raw bytes that are not UTF-8, which a lenient decoder turns into U+FFFD.
  const withBytes = (bytes: number[], field: 'customerId' | 'sku') =>
    Buffer.concat([
      Buffer.from(
        field === 'customerId'
          ? '{"customerId":"c'
          : '{"customerId":"c","currency":"EUR","items":[{"sku":"KB-',
      ),
      Buffer.from(bytes),
      Buffer.from(
        field === 'customerId'
          ? '","currency":"EUR","items":[{"sku":"KB-101","quantity":1}]}'
          : '","quantity":1}]}',
      ),
    ]);
  it.each([
    ['0xFF', [0xff], 'customerId', '#/customerId'],
    ['a stray continuation byte', [0x80], 'customerId', '#/customerId'],
    ['an overlong "/"', [0xc0, 0xaf], 'customerId', '#/customerId'],
    ['a truncated sequence', [0xe2, 0x82], 'sku', '#/items/0/sku'],
    ['a surrogate encoded in UTF-8 (CESU)', [0xed, 0xa0, 0x80], 'customerId', '#/customerId'],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 'sku', '#/items/0/sku'],
  ] as const)('%s (raw bytes)', async (_name, bytes, field, pointer) => {
    const problem = await expectProblem(
      () => postOrders(JSON_TYPE, withBytes([...bytes], field)),
      400,
      'urn:problem:validation',
    );
    expect(problem.errors?.map((error) => error.pointer)).toEqual([pointer]);
  });

  it('stores valid text outside the BMP unchanged', async () => {
    const customerId = 'ünïcödé 🦆 客户';
    const answer = await postOrders(JSON_TYPE, JSON.stringify({ ...validOrder, customerId }));
    expect(answer.status, answer.body).toBe(201);
    const { id } = JSON.parse(answer.body) as { id: string };
    expect(await queryOnce(api.db.url, 'select customer_id from orders where id = $1', [id])).toEqual([
      { customer_id: customerId },
    ]);
  });
});

// --- values decoded from a client token ------------------------------------------------------

describe('a paging cursor whose decoded values are out of range gets a 400 naming cursor', () => {
  const UUID = '00000000-0000-4000-8000-000000000000';
  const cursor = (text: string) => Buffer.from(text).toString('base64url');
  it.each([
    ['year 0', cursor(`0000-01-01T00:00:00.000Z|${UUID}`)],
    ['a negative year', cursor(`-000100-01-01T00:00:00.000Z|${UUID}`)],
    ['year 275760', cursor(`+275760-09-13T00:00:00.000Z|${UUID}`)],
    ['before the API existed (1969)', cursor(`1969-12-31T23:59:59.999Z|${UUID}`)],
    ['a date that does not exist', cursor(`2026-02-30T00:00:00.000Z|${UUID}`)],
    ['a date without time', cursor(`2026-01-01|${UUID}`)],
    ['an epoch number', cursor(`1767225600000|${UUID}`)],
    ['a time with an offset', cursor(`2026-01-01T00:00:00.000+02:00|${UUID}`)],
    ['an id that is not a UUID', cursor('2026-01-01T00:00:00.000Z|1 or 1=1')],
    ['a third part', cursor(`2026-01-01T00:00:00.000Z|${UUID}|x`)],
    ['no id', cursor('2026-01-01T00:00:00.000Z')],
    ['an empty cursor', ''],
    ['not base64url', '!!!!'],
    ['a lone surrogate', cursor(`2026-01-01T00:00:00.000Z\ud800|${UUID}`)],
  ])('%s', async (_name, value) => {
    const problem = await expectProblem(
      () => request('GET', `/orders?cursor=${encodeURIComponent(value)}`),
      400,
      'urn:problem:validation',
    );
    expect(problem.errors?.map((error) => error.parameter)).toEqual(['cursor']);
  });
});
