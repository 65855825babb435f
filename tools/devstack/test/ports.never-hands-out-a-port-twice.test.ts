// freePort asks the OS for a free port, and the OS may assign a port again the moment it is
// closed: a test broker's controller and TLS listener once got the same one. Asked many times in a
// row, freePort gives a different port each time.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../src/ports.ts';

describe('freePort', () => {
  it('never hands out the same port twice in one process', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('hands out a port that can be bound', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
