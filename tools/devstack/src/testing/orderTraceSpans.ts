import { randomBytes, randomUUID } from 'node:crypto';

/**
 * One order's trace as this system sends it to Zipkin (Zipkin's JSON v2, what
 * `POST /api/v2/spans` takes): the request span, four publish spans and six process spans, with the
 * tags and the three resource attributes our spans carry (docs/tracing.md, "What one order costs";
 * tests/tracing/tracing.trace-read-back-from-zipkin.test.ts checks the real ones are this shape).
 * The Zipkin sizing benchmark and the load test post these instead of running the whole system:
 * Zipkin's memory and CPU depend on the spans it is given, not on who sent them.
 */

export type ZipkinSpanJson = {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind: 'SERVER' | 'PRODUCER' | 'CONSUMER';
  timestamp: number;
  duration: number;
  localEndpoint: { serviceName: string };
  tags: Record<string, string>;
};

/** One instance id per service, as one process keeps one for its lifetime. */
const instances = new Map<string, string>();

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * `extraTags` are added to every span, as Zipkin's exporter adds the resource: the benchmark passes
 * the SDK's default resource with them to weigh spans as they were before docs/tracing.md's cut.
 */
export function orderTraceSpans(
  prefix = 'demo',
  startMicros = Date.now() * 1000,
  extraTags: Record<string, string> = {},
): ZipkinSpanJson[] {
  const trace: Trace = {
    traceId: hex(16),
    orderId: randomUUID(),
    prefix,
    extraTags,
    clock: startMicros,
    spans: [],
  };
  const request = requestSpan(trace);
  const created = publish(trace, 'orders', request, 'ORDER_CREATED');
  const reserving = processed(trace, 'inventory', created, 'applied', 'RESERVED');
  const charging = processed(trace, 'billing', created, 'applied', 'AUTHORIZED');
  const reserved = publish(trace, 'inventory', reserving, 'STOCK_RESERVED');
  const authorized = publish(trace, 'billing', charging, 'PAYMENT_AUTHORIZED');
  processed(trace, 'orders', reserved, 'applied', 'PENDING');
  const decided = processed(trace, 'orders', authorized, 'applied', 'CONFIRMED');
  const confirmed = publish(trace, 'orders', decided, 'ORDER_CONFIRMED');
  processed(trace, 'inventory', confirmed, 'ignored', undefined);
  processed(trace, 'billing', confirmed, 'ignored', undefined);
  return trace.spans;
}

/** The topic each service's relay publishes to. */
const TOPIC_OF: Record<string, string> = {
  orders: 'order.events',
  inventory: 'reservation.events',
  billing: 'payment.events',
};

/** The trace being built: its ids, a clock each new span moves on by 1.5 ms, its spans in that order. */
type Trace = {
  traceId: string;
  orderId: string;
  prefix: string;
  extraTags: Record<string, string>;
  clock: number;
  spans: ZipkinSpanJson[];
};

/** A new span of the trace, after the ones before it. */
function addSpan(
  trace: Trace,
  service: string,
  kind: ZipkinSpanJson['kind'],
  name: string,
  parentId: string | undefined,
  tags: Record<string, string>,
): ZipkinSpanJson {
  trace.clock += 1500;
  const instance = instances.get(service) ?? randomUUID();
  instances.set(service, instance);
  const span: ZipkinSpanJson = {
    traceId: trace.traceId,
    id: hex(8),
    ...(parentId ? { parentId } : {}),
    name,
    kind,
    timestamp: trace.clock,
    duration: 800 + Math.floor(Math.random() * 4000),
    localEndpoint: { serviceName: service },
    tags: {
      ...tags,
      ...trace.extraTags,
      'service.instance.id': instance,
      'service.name': service,
      'service.version': '0.0.0',
    },
  };
  trace.spans.push(span);
  return span;
}

/** The orders API's server span of `POST /orders`. */
function requestSpan(trace: Trace): ZipkinSpanJson {
  return addSpan(trace, 'orders', 'SERVER', 'post /orders', undefined, {
    'client.address': '127.0.0.1',
    'http.request.method': 'POST',
    'http.response.status_code': '201',
    'http.route': '/orders',
    'network.peer.address': '127.0.0.1',
    'network.peer.port': String(30_000 + Math.floor(Math.random() * 30_000)),
    'network.protocol.version': '1.1',
    'server.address': '127.0.0.1',
    'server.port': '3000',
    'url.path': '/orders',
    'url.scheme': 'http',
    'user_agent.original': 'node',
  });
}

/** The tags of one event of the order: a fresh event id, the order as key and subject. */
function eventTags(trace: Trace, type: string, source: string) {
  const id = randomUUID();
  return {
    'messaging.message.id': id,
    'messaging.kafka.message.key': trace.orderId,
    'cloudevents.event_id': id,
    'cloudevents.event_type': type,
    'cloudevents.event_source': source,
    'cloudevents.event_subject': trace.orderId,
  };
}

/** A relay's producer span of one event, a child of the span that wrote the event. */
function publish(trace: Trace, source: string, parent: ZipkinSpanJson, type: string): ZipkinSpanJson {
  const topic = TOPIC_OF[source];
  return addSpan(trace, `relay-${source}`, 'PRODUCER', `publish ${trace.prefix}.${topic}`, parent.id, {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'publish',
    'messaging.destination.name': `${trace.prefix}.${topic}`,
    ...eventTags(trace, type, source),
  });
}

/** A consumer's span of one published event, with the consumer's result and the saga's outcome. */
function processed(
  trace: Trace,
  service: string,
  published: ZipkinSpanJson,
  result: string,
  outcome: string | undefined,
): ZipkinSpanJson {
  const topic = published.tags['messaging.destination.name'] ?? '';
  const id = published.tags['cloudevents.event_id'] ?? '';
  return addSpan(trace, service, 'CONSUMER', `process ${topic}`, published.id, {
    'cloudevents.event_id': id,
    'cloudevents.event_type': published.tags['cloudevents.event_type'] ?? '',
    'messaging.consumer.group.name': `${trace.prefix}.${service}`,
    'messaging.destination.name': topic,
    'messaging.destination.partition.id': String(Math.floor(Math.random() * 6)),
    'messaging.kafka.message.key': trace.orderId,
    'messaging.kafka.offset': String(Math.floor(Math.random() * 1_000_000)),
    'messaging.message.id': id,
    'messaging.operation.name': 'process',
    'messaging.operation.type': 'process',
    'messaging.system': 'kafka',
    ...(outcome ? { 'outbox.consumer.outcome': outcome } : {}),
    'outbox.consumer.result': result,
    'outbox.consumer.run_size': String(1 + Math.floor(Math.random() * 8)),
  });
}
