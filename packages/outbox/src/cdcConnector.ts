import { columnOf, EVENT_HEADERS } from '@outbox/contracts';

/**
 * The CDC relay of one service's outbox, as its wire mapping (docs/design.md#polling-or-cdc): the
 * config of a Debezium PostgreSQL connector that reads the outbox table's inserts from the
 * write-ahead log and, through Debezium's Outbox Event Router, publishes each row as the polling
 * relay would (apps/relay/src/engine/publisher.ts with toKafkaMessage, packages/contracts/src/cloudEvents.ts):
 *
 * - headers: EVENT_HEADERS (packages/contracts/src/eventHeaders.ts), the table toKafkaMessage
 *   reads: each column placed as its headers (table.fields.additional.placement), each constant
 *   inserted (constantHeaders).
 * - topic: topicFor(aggregate_type, prefix) ← route.by.field=aggregate_type, route.topic.replacement.
 * - key: aggregate_id, the subject's column ← table.field.event.key with a StringConverter: the
 *   same bytes, so the same murmur2 partition as our producer's.
 * - value: JSON.stringify(payload) ← table.expand.json.payload and a JsonConverter without schemas.
 *
 * The router also adds a header `id` (the event id) that the polling relay does not send: DropHeaders
 * removes it, and `extended.headers.enabled=false` keeps Debezium's own `__debezium.*` headers off.
 * tests/cdc/cdc.publishes-the-same-messages-as-the-polling-relay.test.ts compares the two.
 */

export type CdcConnectorOptions = {
  /** The service database whose `outbox` table is read, e.g. postgresql://postgres@127.0.0.1:5432/orders. */
  databaseUrl: string;
  /** The polling relay's KAFKA_TOPIC_PREFIX: the same topics. */
  topicPrefix: string;
  /** Partitions of the topics Connect creates: the polling relay's KAFKA_TOPIC_PARTITIONS. */
  topicPartitions: number;
  /** Replication slot: one per connector. Lowercase letters, digits and underscores. */
  slotName: string;
  /** Publication of the outbox table (logicalDecoding.ts creates it). */
  publicationName: string;
  /** Names Debezium's own topics and metrics (topic.prefix); the outbox events never use it. */
  serverName: string;
  /**
   * `exactly.once.support=required`: Connect refuses to run the connector unless its worker has
   * exactly-once source support enabled (ConnectWorkerOptions.exactlyOnceSource) and the connector
   * declares it supports it; Debezium's PostgreSQL connector does (its offsets are WAL positions it
   * can resume from exactly). Each poll's records and its offsets commit in one transaction
   * (`transaction.boundary=poll`, Connect's default). Default off.
   */
  exactlyOnce?: boolean;
  /**
   * How often the connector writes and confirms a heartbeat (`heartbeat.interval.ms`), which bounds
   * how long an idle outbox's last rows wait to be marked published. Default 10 s.
   */
  heartbeatIntervalMs?: number;
};

export function renderCdcConnectorConfig(options: CdcConnectorOptions): Record<string, string> {
  const url = new URL(options.databaseUrl);
  const constants = constantHeaders();
  return {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1', // a replication slot has one reader
    'database.hostname': url.hostname,
    'database.port': url.port || '5432',
    'database.user': decodeURIComponent(url.username) || 'postgres',
    // Readable by anyone who can GET the connector's config; in production a Connect ConfigProvider
    // (e.g. a file or a secret store) stands in for it.
    'database.password': decodeURIComponent(url.password),
    'database.dbname': url.pathname.slice(1),
    'topic.prefix': options.serverName,
    // pgoutput is built into PostgreSQL 10+: no server plugin to install.
    'plugin.name': 'pgoutput',
    'slot.name': options.slotName,
    'publication.name': options.publicationName,
    // The publication is created by our setup (tools/devstack/src/logicalDecoding.ts), so the connector's database
    // user needs no right to create one.
    'publication.autocreate.mode': 'disabled',
    'table.include.list': 'public.outbox',
    // From the slot's creation on: rows written before it are the polling relay's (or were
    // published already); a snapshot would publish every row of the table again.
    'snapshot.mode': 'no_data',
    // Rows are only inserted by writers; the updates and deletes of a relay or of retention are
    // not events (the router would skip them with a warning each).
    'skipped.operations': 'u,d,t',
    'tombstones.on.delete': 'false',
    // How often Debezium hands what it decoded to Connect (default 500 ms): part of its latency
    // (docs/benchmarks.md, "Polling or CDC").
    'poll.interval.ms': '100',
    'extended.headers.enabled': 'false',
    // Debezium confirms the position of the last event it hands to Connect; on an idle outbox the
    // slot would stay below the last rows, and the relay, which marks rows published only once
    // the slot confirmed a position after them (apps/relay/src/cdc/cdcConfirmation.ts), would
    // leave them pending. Every heartbeat the connector touches the outbox's last row: an update,
    // which it streams, skips (skipped.operations) and confirms with the heartbeat's offset.
    'heartbeat.interval.ms': String(options.heartbeatIntervalMs ?? 10_000),
    'heartbeat.action.query':
      'update outbox set attempts = attempts where seq = (select max(seq) from outbox)',
    // Topics Connect creates when the first event of an aggregate type arrives: as many partitions
    // as the polling relay's, or the same key would land on another partition.
    'topic.creation.default.partitions': String(options.topicPartitions),
    'topic.creation.default.replication.factor': '-1', // the broker's default.replication.factor
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': 'false',
    transforms: ['outbox', 'dropEventIdHeader', ...constants.names].join(','),
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': columnOf('id'),
    'transforms.outbox.table.field.event.key': columnOf('subject'),
    'transforms.outbox.table.field.event.type': columnOf('type'),
    'transforms.outbox.table.field.event.payload': 'payload',
    // The payload as JSON, not as a JSON string inside the value. The router infers a Connect
    // schema from each payload; without these two it would drop null fields and empty arrays.
    'transforms.outbox.table.expand.json.payload': 'true',
    'transforms.outbox.table.json.payload.null.behavior': 'optional_bytes',
    'transforms.outbox.table.json.payload.empty.array.behavior': 'optional_string',
    'transforms.outbox.table.fields.additional.placement': placedColumns(),
    'transforms.outbox.route.by.field': columnOf('aggregatetype'),
    'transforms.outbox.route.topic.replacement': `${options.topicPrefix}\${routedByValue}.events`,
    'transforms.dropEventIdHeader.type': 'org.apache.kafka.connect.transforms.DropHeaders',
    'transforms.dropEventIdHeader.headers': 'id',
    ...constants.config,
    ...(options.exactlyOnce ? { 'exactly.once.support': 'required', 'transaction.boundary': 'poll' } : {}),
  };
}

/** Each column of EVENT_HEADERS placed as each of its headers, in the table's order. */
function placedColumns(): string {
  return EVENT_HEADERS.flatMap(({ column, headers }) =>
    column ? headers.map((header) => `${column}:header:${header}`) : [],
  ).join(',');
}

/**
 * The transforms that insert each constant of EVENT_HEADERS as its header, in the table's order.
 * Two steps each: InsertHeader would parse its literal as a Connect value, and `1.0` would become
 * the number 1 (the header would read "1"). InsertField's static value stays a string; HeaderFrom
 * then moves that field from the value into the header, leaving the value as it was.
 */
function constantHeaders(): { names: string[]; config: Record<string, string> } {
  const names: string[] = [];
  const config: Record<string, string> = {};
  for (const { attribute, headers, constant } of EVENT_HEADERS) {
    if (constant === undefined) continue;
    const [header, ...more] = headers;
    if (!header || more.length > 0) throw new Error(`the constant ${attribute} needs exactly one header`);
    const field = `${attribute}Field`;
    const move = `${attribute}Header`;
    names.push(field, move);
    Object.assign(config, {
      [`transforms.${field}.type`]: 'org.apache.kafka.connect.transforms.InsertField$Value',
      [`transforms.${field}.static.field`]: header,
      [`transforms.${field}.static.value`]: constant,
      [`transforms.${move}.type`]: 'org.apache.kafka.connect.transforms.HeaderFrom$Value',
      [`transforms.${move}.fields`]: header,
      [`transforms.${move}.headers`]: header,
      [`transforms.${move}.operation`]: 'move',
    });
  }
  return { names, config };
}
