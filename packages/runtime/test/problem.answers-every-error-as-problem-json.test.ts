import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpProblem, notFound, problemHandler, writeProblem } from '../src/problem.ts';

let server: Server | undefined;

afterEach(async () => {
  const open = server;
  server = undefined;
  if (open) await new Promise<void>((resolve) => open.close(() => resolve()));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const listening = createServer(handler);
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

/** An app whose one route throws `thrown`, behind problemHandler; `logged` collects error lines. */
function appThrowing(thrown: unknown, toProblem?: (err: unknown) => HttpProblem | undefined) {
  const logged: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(line) });
  const app = express();
  app.use(express.json());
  app.post('/thing', () => {
    throw thrown;
  });
  app.use(problemHandler(logger, toProblem));
  return { app, logged };
}

const PROBLEM = new HttpProblem(422, 'Cannot do that', 'Because of the field.', {
  type: 'urn:problem:example',
  errors: [{ pointer: '#/a', detail: 'bad' }],
  headers: { 'Retry-After': '5' },
});

/** PROBLEM's body, answering a request for `instance`. */
const problemBodyFor = (instance: string) => ({
  type: 'urn:problem:example',
  title: 'Cannot do that',
  status: 422,
  detail: 'Because of the field.',
  instance,
  errors: [{ pointer: '#/a', detail: 'bad' }],
});

describe('problemHandler', () => {
  it('answers an HttpProblem as itself: status, headers, type, title, detail, errors and instance', async () => {
    const { app } = appThrowing(PROBLEM);
    const response = await fetch(`${await listen(app)}/thing?x=1`, { method: 'POST' });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual(problemBodyFor('/thing?x=1'));
  });

  it('types a problem about:blank unless told otherwise, and notFound is a 404', async () => {
    const { app } = appThrowing(notFound('No thing.'));
    const response = await fetch(`${await listen(app)}/thing`, { method: 'POST' });
    expect(await response.json()).toEqual({
      type: 'about:blank',
      title: 'Not found',
      status: 404,
      detail: 'No thing.',
      instance: '/thing',
    });
  });

  it("answers the app's own errors as the problem its mapper gives", async () => {
    const away = Object.assign(new Error('connection refused'), { code: 'AWAY' });
    const { app, logged } = appThrowing(away, (err) =>
      (err as { code?: string }).code === 'AWAY' ? new HttpProblem(503, 'Away', 'Try later.') : undefined,
    );
    const response = await fetch(`${await listen(app)}/thing`, { method: 'POST' });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ title: 'Away', status: 503 });
    expect(logged).toEqual([]);
  });

  it('answers a client error of the HTTP stack (malformed JSON) as a 400, not a 500', async () => {
    const { app, logged } = appThrowing(new Error('not reached'));
    const response = await fetch(`${await listen(app)}/thing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ type: 'urn:problem:malformed-json', title: 'Malformed JSON', status: 400 });
    expect(logged).toEqual([]);
  });

  it('logs anything else and answers 500 without its message', async () => {
    const { app, logged } = appThrowing(new Error('secret internals'));
    const response = await fetch(`${await listen(app)}/thing`, { method: 'POST' });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('secret internals');
    expect(JSON.parse(text)).toMatchObject({ type: 'urn:problem:internal', status: 500 });
    expect(logged.join('')).toContain('secret internals');
  });
});

describe('writeProblem', () => {
  it('answers the same problem+json on a plain node:http response as problemHandler does', async () => {
    const url = await listen((req, res) => writeProblem(res, PROBLEM, req.url));
    const response = await fetch(`${url}/admin/redrive`);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual(problemBodyFor('/admin/redrive'));
  });
});
