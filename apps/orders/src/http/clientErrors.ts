import { type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemBody } from '@outbox/runtime/problem';

/** Node's HTTP parser codes that have a status of their own; every other parse error is a 400. */
const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
};

/**
 * Requests Node's HTTP parser refuses (a malformed request line or header, an invalid
 * Transfer-Encoding, headers too large) never reach Express; by default Node answers them with a
 * bare `400 Bad Request` and no body. Answer them as problem+json like every other client error.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing to answer on a connection the client reset or that is already answered.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = STATUS_BY_CODE[err.code ?? ''] ?? 400;
    const problem = new HttpProblem(
      status,
      'Malformed HTTP request',
      `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}).`,
      { type: 'urn:problem:bad-request' },
    );
    // No request was parsed, so there is neither an instance to name nor a response object to use.
    const body = JSON.stringify(problemBody(problem));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `content-type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  });
}
