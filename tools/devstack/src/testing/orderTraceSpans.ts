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
  const traceId = hex(16);
  const orderId = randomUUID();
  let clock = startMicros;
  const span = (
    service: string,
    kind: ZipkinSpanJson['kind'],
    name: string,
    parentId: string | undefined,
    tags: Record<string, string>,
  ): ZipkinSpanJson => {
    clock += 1500;
    const instance = instances.get(service) ?? randomUUID();
    instances.set(service, instance);
    return {
      traceId,
      id: hex(8),
      ...(parentId ? { parentId } : {}),
      name,
      kind,
      timestamp: clock,
      duration: 800 + Math.floor(Math.random() * 4000),
      localEndpoint: { serviceName: service },
      tags: {
        ...tags,
        ...extraTags,
        'service.instance.id': instance,
        'service.name': service,
        'service.version': '0.0.0',
      },
    };
  };
  const event = (type: string, source: string) => {
    const id = randomUUID();
    return {
      'messaging.message.id': id,
      'messaging.kafka.message.key': orderId,
      'cloudevents.event_id': id,
      'cloudevents.event_type': type,
      'cloudevents.event_source': source,
      'cloudevents.event_subject': orderId,
    };
  };
  const publish = (relay: string, topic: string, parent: ZipkinSpanJson, type: string, source: string) =>
    span(relay, 'PRODUCER', `publish ${prefix}.${topic}`, parent.id, {
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.destination.name': `${prefix}.${topic}`,
      ...event(type, source),
    });
  const processed = (
    service: string,
    published: ZipkinSpanJson,
    result: string,
    outcome: string | undefined,
  ): ZipkinSpanJson => {
    const topic = published.tags['messaging.destination.name'] ?? '';
    const id = published.tags['cloudevents.event_id'] ?? '';
    return span(service, 'CONSUMER', `process ${topic}`, published.id, {
      'cloudevents.event_id': id,
      'cloudevents.event_type': published.tags['cloudevents.event_type'] ?? '',
      'messaging.consumer.group.name': `${prefix}.${service}`,
      'messaging.destination.name': topic,
      'messaging.destination.partition.id': String(Math.floor(Math.random() * 6)),
      'messaging.kafka.message.key': orderId,
      'messaging.kafka.offset': String(Math.floor(Math.random() * 1_000_000)),
      'messaging.message.id': id,
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.system': 'kafka',
      ...(outcome ? { 'outbox.consumer.outcome': outcome } : {}),
      'outbox.consumer.result': result,
      'outbox.consumer.run_size': String(1 + Math.floor(Math.random() * 8)),
    });
  };

  const request = span('orders', 'SERVER', 'post /orders', undefined, {
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
  const created = publish('relay-orders', 'order.events', request, 'ORDER_CREATED', 'orders');
  const reserving = processed('inventory', created, 'applied', 'RESERVED');
  const charging = processed('billing', created, 'applied', 'AUTHORIZED');
  const reserved = publish('relay-inventory', 'reservation.events', reserving, 'STOCK_RESERVED', 'inventory');
  const authorized = publish('relay-billing', 'payment.events', charging, 'PAYMENT_AUTHORIZED', 'billing');
  const onReserved = processed('orders', reserved, 'applied', 'PENDING');
  const onAuthorized = processed('orders', authorized, 'applied', 'CONFIRMED');
  const confirmed = publish('relay-orders', 'order.events', onAuthorized, 'ORDER_CONFIRMED', 'orders');
  return [
    request,
    created,
    reserving,
    charging,
    reserved,
    authorized,
    onReserved,
    onAuthorized,
    confirmed,
    processed('inventory', confirmed, 'ignored', undefined),
    processed('billing', confirmed, 'ignored', undefined),
  ];
}
