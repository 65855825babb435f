import type { IncomingMessage, RequestListener } from 'node:http';
import { writeProblem } from '@outbox/runtime/problem';
import { untraceRequests } from '@outbox/runtime/tracing';
import type { Admission } from './admission.ts';
import type { HttpMetrics } from './httpMetrics.ts';
import { overloadedProblem } from './overload.ts';

/** The path of POST /orders, as a request arrives (with or without a query or a trailing slash). */
const ORDERS_COLLECTION = /^\/orders\/?(\?|$)/i;

/** The route label the orders router counts POST /orders under (httpMetrics.ts). */
const ORDERS_ROUTE = '/orders';

const isPostOrders = (req: IncomingMessage) => req.method === 'POST' && ORDERS_COLLECTION.test(req.url ?? '');

/**
 * The API's front door, in front of Express: an order the admission limit would refuse on arrival
 * is answered here, 503 overloaded with its Retry-After, before its body is read and before any
 * routing, middleware, span or error path. Past capacity most requests are such refusals, and
 * every bit of CPU one takes is taken from the orders being served (docs/performance.md, "A
 * refusal at the door"). It is counted as the router would count it: under route /orders in
 * http_requests_total and http_request_duration_seconds, and by reason in
 * http_admission_shed_total. Every other request goes on to `app`.
 */
export function frontDoor(
  app: RequestListener,
  admission: Admission,
  metrics: HttpMetrics,
  retryAfterSeconds: number,
): RequestListener {
  // One problem for every refusal: only its `instance`, the request's URL, differs.
  const overloaded = overloadedProblem(retryAfterSeconds);
  // Asked by the HTTP instrumentation just before the listener runs, in the same turn: the
  // refusals below start no span.
  untraceRequests((req) => isPostOrders(req) && admission.wouldRefuseOnArrival());
  return (req, res) => {
    const arrivedAt = performance.now();
    if (!isPostOrders(req) || admission.shedOnArrival(arrivedAt) === undefined) {
      app(req, res);
      return;
    }
    // The unread body is discarded by node:http once the answer is sent; the connection lives on.
    writeProblem(res, overloaded, req.url);
    metrics.record('POST', ORDERS_ROUTE, 503, (performance.now() - arrivedAt) / 1000);
  };
}
