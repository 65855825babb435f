import { Agent, type IncomingMessage, request } from 'node:http';

type HttpResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
};

/**
 * A keep-alive connection pool of one run. The run owns it and destroys it at the end, so no
 * socket outlives the run (fetch's global pool would keep idle sockets open for seconds).
 */
export function createConnectionPool(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets });
}

/**
 * POST a raw body and read the whole answer. Rejects on a connection error or when no complete
 * answer arrived within `timeoutMs`: then the client cannot know whether the server acted.
 */
export function postRaw(
  agent: Agent,
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    // One timer per request, cleared by its answer: at a thousand requests a second,
    // AbortSignal.timeout's signals and timers would each live on for the whole timeout.
    const timer = setTimeout(
      () => req.destroy(new Error(`no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const settle =
      <T>(done: (value: T) => void) =>
      (value: T) => {
        clearTimeout(timer);
        done(value);
      };
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => readAnswer(res, settle(resolve), settle(reject)),
    );
    req.on('error', settle(reject));
    req.end(body);
  });
}

/** GET a small text document (a /metrics page) on a connection of its own, closed afterwards. */
export function getText(url: URL, timeoutMs: number): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) =>
      readAnswer(res, resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

/** Read a whole answer: its status, headers and body as text. */
function readAnswer(
  res: IncomingMessage,
  resolve: (answer: HttpResponse) => void,
  reject: (err: Error) => void,
): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () =>
    resolve({
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    }),
  );
  res.on('error', reject);
}
