import { activeSpanExemplar } from '@outbox/runtime/exemplars';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import type { RequestHandler } from 'express';
import { Counter, Histogram } from 'prom-client';

export type HttpMetrics = {
  /** Express middleware: every answer counted under its matched route pattern, and timed. */
  middleware: RequestHandler;
  /** An answer given before Express (frontDoor.ts), counted and timed the same way. */
  record(method: string, route: string, status: number, seconds: number): void;
};

/**
 * RED metrics for the API: rate and errors (http_requests_total by status) and duration.
 * The route label is the matched route pattern (`/orders/:id`), never the raw path, so an id in
 * the URL cannot explode the number of series.
 */
export function httpMetrics(registry: MetricsRegistry): HttpMetrics {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
    enableExemplars: true,
  });
  const middleware: RequestHandler = (req, res, next) => {
    const started = performance.now();
    // The admission limit times its refusals from here: the request's arrival (admission.ts).
    res.locals.arrivedAt = started;
    // Here the request's server span is active (the http instrumentation wraps the handlers);
    // by 'finish' it may not be, so take its trace id now.
    const exemplarLabels = activeSpanExemplar();
    res.on('finish', () => {
      const base = (res.locals.mountPath as string | undefined) ?? req.baseUrl;
      const route = req.route ? `${base}${req.route.path === '/' ? '' : req.route.path}` : 'unmatched';
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
      const seconds = (performance.now() - started) / 1000;
      duration.observe({ labels: { method: req.method, route }, value: seconds, exemplarLabels });
    });
    next();
  };
  return {
    middleware,
    record(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      // No span, so no exemplar (the histogram takes its observations in the exemplar form).
      duration.observe({ labels: { method, route }, value: seconds, exemplarLabels: {} });
    },
  };
}

/**
 * Mounted in front of a router (`app.use('/orders', rememberMountPath, router)`): keeps the router's
 * mount path for the route label. Express restores `req.baseUrl` when an error leaves the router,
 * so an error answer (a 400, a 503 overloaded) would otherwise be counted under the route "".
 */
export const rememberMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};
