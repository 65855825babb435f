import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * Where the next COMMIT is cut:
 * - `after-the-server-commits`: the COMMIT reaches PostgreSQL, which commits and answers; the
 *   answer is dropped and the client's connection cut. The client cannot tell it from the next one.
 * - `before-the-server-gets-it`: the COMMIT is dropped and both connections are cut; the server
 *   sees its client go and rolls the transaction back.
 * - `keep-the-backend-waiting`: the COMMIT is dropped and only the client's connection is cut; the
 *   server's side stays open, so its transaction stays open too (as after a network failure the
 *   server has not noticed yet), until `releaseHeld()`.
 */
export type CutMode = 'after-the-server-commits' | 'before-the-server-gets-it' | 'keep-the-backend-waiting';

export type CommitCutter = {
  /** `databaseUrl` (any database on the cutter's server) rewritten to go through the cutter. */
  through(databaseUrl: string): string;
  /** Cut the next COMMIT that any connection sends, as `mode` says; later ones pass. */
  cutNextCommit(mode: CutMode): void;
  /** COMMITs cut so far: a test checks its fault really happened. */
  readonly cuts: number;
  /** Close the server side of the connections `keep-the-backend-waiting` held open. */
  releaseHeld(): void;
  close(): Promise<void>;
};

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const QUERY = 0x51; // 'Q', a simple-protocol query: how node-postgres sends Prisma's COMMIT

/**
 * A loopback TCP proxy between a client pool and the PostgreSQL server at `serverUrl` that reads
 * the frontend protocol (https://www.postgresql.org/docs/15/protocol-message-formats.html) message
 * by message, so a test can cut a connection at the exact moment of COMMIT.
 */
export async function startCommitCutter(serverUrl: string): Promise<CommitCutter> {
  const target = new URL(serverUrl);
  let armed: CutMode | undefined;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const held = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    track(client);
    track(upstream);
    let dropAnswer = false;
    upstream.on('data', (chunk) => {
      if (!dropAnswer) return client.write(chunk);
      // The server has answered the COMMIT, so it has committed: the client never hears it.
      client.destroy();
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => {
      if (!held.has(upstream)) upstream.destroy();
    });
    readMessages(client, (message) => {
      const mode = isCommit(message) ? armed : undefined;
      if (mode === undefined) return upstream.write(message);
      armed = undefined;
      cuts++;
      if (mode === 'after-the-server-commits') {
        dropAnswer = true;
        upstream.write(message);
        return;
      }
      if (mode === 'keep-the-backend-waiting') held.add(upstream);
      client.destroy();
      if (mode === 'before-the-server-gets-it') upstream.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    through(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    cutNextCommit(mode) {
      armed = mode;
    },
    get cuts() {
      return cuts;
    },
    releaseHeld() {
      for (const socket of held) socket.destroy();
      held.clear();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Calls `onMessage` with each whole frontend message `client` sends. The first messages have no
 * type byte (an SSL or GSSAPI request, then the startup message); every later one is a type byte
 * and a length that counts itself but not the type.
 */
function readMessages(client: Socket, onMessage: (message: Buffer) => void): void {
  let pending = Buffer.alloc(0);
  let startup = true;
  client.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (true) {
      const header = startup ? 0 : 1;
      if (pending.length < header + 4) return;
      const size = header + pending.readInt32BE(header);
      if (pending.length < size) return;
      const message = pending.subarray(0, size);
      pending = pending.subarray(size);
      if (startup) {
        const code = message.readInt32BE(4);
        startup = code === SSL_REQUEST || code === GSSENC_REQUEST;
      }
      onMessage(message);
    }
  });
}

function isCommit(message: Buffer): boolean {
  if (message[0] !== QUERY) return false;
  return /^\s*commit\b/i.test(message.subarray(5).toString('utf8'));
}
