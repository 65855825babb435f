import { HttpProblem } from '@outbox/runtime/problem';
import type { RequestHandler } from 'express';

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Refuses a request whose Host header is not the console's own loopback name and port (403).
 *
 * DNS rebinding: a web page on evil.example can make its own name resolve to 127.0.0.1 and then
 * read the console through the visitor's browser; the browser's same-origin rule does not stop it,
 * because to the browser the page and the console share the origin http://evil.example:8080. Only
 * the Host header still says evil.example. Names a deployment reaches the console by (a proxy's,
 * say) are added with CONSOLE_HOSTS. `/healthz` answers any Host: it tells nothing, and container
 * health checks call it by whatever name.
 *
 * This is not authentication: any program that reaches the port (curl, another local user's
 * process) sends whatever Host it likes. What writes or acts (placing an order, redrive, the demo's
 * buttons) also needs CONSOLE_ADMIN_TOKEN.
 */
export function requireOwnHost(extraHosts: readonly string[]): RequestHandler {
  const extra = new Set(extraHosts.map((host) => host.toLowerCase()));
  return (req, _res, next) => {
    if (req.path === '/healthz') return next();
    const host = (req.get('host') ?? '').toLowerCase();
    if (extra.has(host)) return next();
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(host);
    if (match && LOOPBACK_NAMES.has(match[1] ?? '') && Number(match[2]) === req.socket.localPort)
      return next();
    next(
      new HttpProblem(
        403,
        'Unknown host',
        `The console answers only to its own address (such as 127.0.0.1:${req.socket.localPort}), not to Host ${JSON.stringify(host)}; add other names with CONSOLE_HOSTS.`,
      ),
    );
  };
}
