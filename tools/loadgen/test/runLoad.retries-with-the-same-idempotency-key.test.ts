// The client's side of idempotency, against a small fake of the orders API: the behaviour under
// test is what the load generator sends, so the fake only has to answer the way the API would.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runLoad.ts';

useLeakGuard();

type Attempt = { key: string | undefined; body: string };
type Answer = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A fake POST /orders that records every attempt and answers the n-th one with `answers[n]`. */
async function fakeOrdersApi(answers: Answer[]): Promise<{ url: string; attempts: Attempt[] }> {
  const attempts: Attempt[] = [];
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    attempts.push({ key: req.headers['idempotency-key'] as string | undefined, body });
    const answer = answers[attempts.length - 1] ?? answers.at(-1);
    answer?.(req, res, attempts.length);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts };
}

const problem =
  (status: number, type: string, title: string): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ type, title, status }));
  };
const unavailable = problem(503, 'urn:problem:database-unavailable', 'Database unavailable');
const created =
  (id: string, replayed = false): Answer =>
  (_req, res) => {
    res.writeHead(201, {
      'content-type': 'application/json',
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    res.end(JSON.stringify({ id }));
  };
/** The order is created, but the answer never arrives (the connection drops). */
const lostAnswer: Answer = (req) => req.socket.destroy();

const oneValidOrder = (url: string, attempts = 5) =>
  runLoad({
    ordersUrl: url,
    burst: true,
    count: 1,
    mix: { valid: 1 },
    seed: 7,
    retry: { attempts, baseDelayMs: 5, maxDelayMs: 20 },
  });

describe('retries with an Idempotency-Key', () => {
  it('retries 503 with the same key and body until the order is accepted', async () => {
    const id = randomUUID();
    const api = await fakeOrdersApi([unavailable, unavailable, created(id)]);
    const result = await oneValidOrder(api.url);

    expect(api.attempts).toHaveLength(3);
    const [first] = api.attempts;
    expect(first?.key).toMatch(/^[0-9a-f-]{36}$/);
    for (const attempt of api.attempts) expect(attempt).toEqual(first);
    expect(result.orders).toEqual([
      expect.objectContaining({
        kind: 'valid',
        status: 201,
        orderId: id,
        attempts: 3,
        idempotencyKey: first?.key,
      }),
    ]);
    expect(result.accepted).toBe(1);
    expect(result.rejected).toEqual({});
  });

  it('after a lost answer, the retry gets the order the first attempt created (a replay), not a second one', async () => {
    const id = randomUUID();
    const api = await fakeOrdersApi([lostAnswer, created(id, true)]);
    const result = await oneValidOrder(api.url);

    expect(api.attempts.map((a) => a.key)).toEqual([api.attempts[0]?.key, api.attempts[0]?.key]);
    expect(result.orders[0]).toMatchObject({ status: 201, orderId: id, attempts: 2, replayed: true });
    expect(result.unknownOutcome).toBe(0);
  });

  it('counts an order as of unknown outcome when an answer was lost and no retry was accepted', async () => {
    const overloaded = problem(503, 'urn:problem:overloaded', 'Overloaded');
    const result = await oneValidOrder((await fakeOrdersApi([lostAnswer, overloaded])).url, 2);
    expect(result.orders[0]).toMatchObject({ status: 503, unanswered: 1, shedAnswers: 1 });
    expect(result).toMatchObject({ shed: 1, unknownOutcome: 1 });
  });

  it('retries a 503 whose commit outcome is unknown with the same key, and gets the order it may have made', async () => {
    const id = randomUUID();
    const unknown = problem(503, 'urn:problem:commit-outcome-unknown', 'Order outcome unknown');
    const api = await fakeOrdersApi([unknown, created(id, true)]);
    const result = await oneValidOrder(api.url);

    expect(api.attempts.map((a) => a.key)).toEqual([api.attempts[0]?.key, api.attempts[0]?.key]);
    expect(result.orders[0]).toMatchObject({ status: 201, orderId: id, attempts: 2, replayed: true });
  });

  it('gives up after the last attempt and counts the order as rejected, by reason', async () => {
    const api = await fakeOrdersApi([unavailable]);
    const result = await oneValidOrder(api.url, 3);

    expect(api.attempts).toHaveLength(3);
    expect(new Set(api.attempts.map((a) => a.key)).size).toBe(1);
    expect(result.orders[0]).toMatchObject({
      status: 503,
      attempts: 3,
      problem: { title: 'Database unavailable' },
    });
    expect(result.accepted).toBe(0);
    expect(result.rejected).toEqual({ '503 database-unavailable': 1 });
  });

  it('counts an order shed at its last attempt (503 overloaded) as shed, not rejected, and each shed answer', async () => {
    const overloaded: Answer = (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      res.end(JSON.stringify({ type: 'urn:problem:overloaded', title: 'Overloaded', status: 503 }));
    };
    const shed = await oneValidOrder((await fakeOrdersApi([overloaded])).url, 3);
    expect(shed.orders[0]).toMatchObject({ status: 503, attempts: 3, shedAnswers: 3 });
    expect(shed).toMatchObject({ accepted: 0, shed: 1, shedAnswers: 3, rejected: {} });
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));

    const id = randomUUID();
    const later = await oneValidOrder((await fakeOrdersApi([overloaded, created(id)])).url, 3);
    expect(later.orders[0]).toMatchObject({ status: 201, orderId: id, attempts: 2, shedAnswers: 1 });
    expect(later).toMatchObject({ accepted: 1, shed: 0, shedAnswers: 1, rejected: {} });
  });

  it('does not retry an answer that will not change: 400, 422, 500', async () => {
    for (const answer of [
      problem(400, 'urn:problem:validation', 'Invalid request body'),
      problem(422, 'urn:problem:unorderable-items', 'Items cannot be ordered'),
      problem(500, 'urn:problem:internal', 'Internal error'),
    ]) {
      const api = await fakeOrdersApi([answer]);
      const result = await oneValidOrder(api.url);
      expect(api.attempts).toHaveLength(1);
      expect(result.orders[0]?.attempts).toBe(1);
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
  });

  it('uses a new key for every order', async () => {
    const api = await fakeOrdersApi([(_req, res) => created(randomUUID())(_req, res, 0)]);
    const result = await runLoad({ ordersUrl: api.url, burst: true, count: 20, mix: { valid: 1 } });
    expect(result.accepted).toBe(20);
    expect(new Set(api.attempts.map((a) => a.key)).size).toBe(20);
  });
});
