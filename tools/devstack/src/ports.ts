import { type AddressInfo, createServer, type Server } from 'node:net';

/** Ports this process has handed out: the OS may assign a port again as soon as it is closed. */
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. The OS picks it (port 0), so parallel test
 * runs do not collide the way hard-coded ports do. Never one this process has handed out before:
 * a broker's controller and TLS listener, asked for one after the other, once got the same port,
 * since the OS is free to assign a port again the moment it is closed. There is still a small race
 * with other processes between closing and the caller binding it; that is acceptable for tests,
 * which is what this is for.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await portTheOsAssigns();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('The OS kept assigning ports this process had handed out already.');
}

async function portTheOsAssigns(): Promise<number> {
  const server = createServer();
  server.unref();
  const port = await listenOnAnyPort(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `server` listening on 127.0.0.1, on a port the OS picks; resolves with that port. */
export function listenOnAnyPort(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The first of `size` consecutive ports on 127.0.0.1 that were all free a moment ago, for a
 * process that takes a block from one base port (`./dev demo` with DEMO_BASE_PORT).
 */
export async function freePortBlock(size: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const used = await Promise.all(Array.from({ length: size }, (_, i) => isPortInUse(base + i)));
    if (!used.includes(true)) return base;
  }
  throw new Error('no block of free ports found');
}

/** Whether something already listens on 127.0.0.1:port (checked by trying to bind it ourselves). */
export function isPortInUse(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(true);
      else reject(error);
    });
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}
