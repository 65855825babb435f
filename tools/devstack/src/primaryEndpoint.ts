import { createConnection, createServer, type Socket } from 'node:net';
import { listenOnAnyPort } from './ports.ts';

export type PrimaryEndpoint = {
  port: number;
  /** The server new connections go to; undefined while there is no primary (they are refused). */
  readonly target: number | undefined;
  /**
   * Send new connections to another server (or to none) and cut every connection open through
   * the endpoint, as a virtual IP moving to the promoted standby does: a client's next connection
   * reaches the new primary, and none stays on the old one.
   */
  switchTo(target: number | undefined): void;
  close(): Promise<void>;
};

/**
 * One address for "the primary" in front of a primary/standby pair. node-postgres connects to a
 * single host (it has no multi-host connection string with target_session_attrs, see
 * docs/production.md#database-failover), so what production does with a virtual IP, PgBouncer or
 * a Patroni-aware proxy is done here with a plain loopback TCP forwarder that the pair switches on
 * promotion. The services keep one DATABASE_URL and need no restart.
 */
export async function startPrimaryEndpoint(target: number): Promise<PrimaryEndpoint> {
  const sockets = new Set<Socket>();
  let current: number | undefined = target;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    client.on('error', () => client.destroy());
    if (current === undefined) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: current });
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const port = await listenOnAnyPort(server);
  return {
    port,
    get target() {
      return current;
    },
    switchTo: (next) => {
      current = next;
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
