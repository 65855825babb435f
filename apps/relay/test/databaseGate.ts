import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '@outbox/devstack/ports';

/** Helpers shared by the relay's process-level tests (not a test file itself). */

export type GateMode = 'open' | 'refuse' | 'black-hole';

export type DatabaseGate = {
  /** The database URL rewritten to go through the gate. */
  url: string;
  /**
   * `open` forwards; `refuse` drops every connection at once (the server restarting or gone);
   * `black-hole` keeps accepting connections but forwards nothing either way, as a dead host or a
   * firewall dropping packets would: only a timeout on the client notices.
   */
  set(mode: GateMode): void;
  close(): Promise<void>;
};

/** A loopback TCP gate between a relay and PostgreSQL, so a test can take the database away. */
export async function startDatabaseGate(databaseUrl: string): Promise<DatabaseGate> {
  const target = new URL(databaseUrl);
  const targetPort = Number(target.port || 5432);
  const port = await freePort();
  let mode: GateMode = 'open';
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    if (mode === 'black-hole') return; // accepted, never answered
    const upstream = createConnection({ host: target.hostname, port: targetPort });
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    set(next) {
      mode = next;
      if (next === 'refuse') for (const socket of sockets) socket.destroy();
      if (next === 'black-hole') {
        // Existing connections go silent too: stop forwarding in both directions.
        for (const socket of sockets) {
          socket.unpipe();
          socket.pause();
        }
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
