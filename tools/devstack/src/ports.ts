import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. The OS picks it (port 0), so parallel test
 * runs do not collide the way hard-coded ports do. There is a small race between closing and the
 * caller binding it; that is acceptable for tests, which is what this is for.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => {
        if (port === undefined) reject(new Error('Could not read the port the OS assigned on 127.0.0.1.'));
        else resolve(port);
      });
    });
  });
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
