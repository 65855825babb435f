import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type TcpProxy = {
  port: number;
  /** One-way delay added to every chunk, in each direction; change it while traffic flows. */
  latencyMs: number;
  /** Bytes forwarded so far, both directions: shows the clients really go through the proxy. */
  readonly bytesForwarded: number;
  close(): Promise<void>;
};

/**
 * A loopback TCP proxy that delays every chunk by `latencyMs` in both directions, keeping the
 * bytes in order. Enough to make a broker slow for its clients; not a general traffic shaper
 * (no bandwidth limit, no packet loss).
 */
export async function startTcpProxy(options: {
  listenPort: number;
  targetPort: number;
  latencyMs: number;
}): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let bytesForwarded = 0;
  const proxy: TcpProxy = {
    port: options.listenPort,
    latencyMs: options.latencyMs,
    get bytesForwarded() {
      return bytesForwarded;
    },
    close: async () => {},
  };

  /** Forward `from` to `to`, each chunk after the current latency, never overtaking an earlier one. */
  const pipeDelayed = (from: Socket, to: Socket) => {
    let lastDue = 0;
    from.on('data', (chunk) => {
      const due = Math.max(Date.now() + proxy.latencyMs, lastDue);
      lastDue = due;
      setTimeout(() => {
        if (to.destroyed) return;
        bytesForwarded += chunk.length;
        to.write(chunk);
      }, due - Date.now());
    });
    from.on('close', () => setTimeout(() => to.destroy(), Math.max(0, lastDue - Date.now())));
    from.on('error', () => to.destroy());
  };

  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: options.targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.setNoDelay(true);
    }
    pipeDelayed(client, upstream);
    pipeDelayed(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listenPort, '127.0.0.1', () => resolve());
  });
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
