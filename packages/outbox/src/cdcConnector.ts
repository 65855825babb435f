/**
 * The CDC relay of one service's outbox, as its wire mapping (docs/design.md#polling-or-cdc): the config of a Debezium
 * PostgreSQL connector that reads the outbox table's inserts from the write-ahead log and, through
 * Debezium's Outbox Event Router, publishes each row as the polling relay would
 * (apps/relay/src/engine/publisher.ts with toKafkaMessage, packages/contracts/src/cloudEvents.ts):
 *
 * - topic: topicFor(aggregate_type, prefix) ← route.by.field=aggregate_type, route.topic.replacement.
 * - key: aggregate_id ← table.field.event.key with a StringConverter: the same bytes, so the same
 *   murmur2 partition as our producer's.
 * - value: JSON.stringify(payload) ← table.expand.json.payload and a JsonConverter without schemas.
 * - ce_id, ce_source, ce_type, ce_subject, ce_aggregatetype, ce_schemaversion: the row's columns
 *   ← table.fields.additional.placement.
 * - ce_time: created_at.toISOString() ← created_at, a timestamptz(3) since migration 005, which
 *   Debezium prints with the column's three fraction digits.
 * - ce_traceparent and traceparent: the stored traceparent ← the traceparent column (migration 005)
 *   placed twice. NULL (an untraced event) still makes both headers, without a value.
 * - ce_specversion, content-type: constants ← InsertField + HeaderFrom, InsertHeader.
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
  const additionalHeaders = [
    'id:header:ce_id',
    'source:header:ce_source',
    'event_type:header:ce_type',
    'created_at:header:ce_time',
    'aggregate_id:header:ce_subject',
    'aggregate_type:header:ce_aggregatetype',
    'schema_version:header:ce_schemaversion',
    'traceparent:header:ce_traceparent',
    'traceparent:header:traceparent',
  ];
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
    transforms: 'outbox,dropEventIdHeader,specversionField,specversionHeader,contentType',
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': 'id',
    'transforms.outbox.table.field.event.key': 'aggregate_id',
    'transforms.outbox.table.field.event.type': 'event_type',
    'transforms.outbox.table.field.event.payload': 'payload',
    // The payload as JSON, not as a JSON string inside the value. The router infers a Connect
    // schema from each payload; without these two it would drop null fields and empty arrays.
    'transforms.outbox.table.expand.json.payload': 'true',
    'transforms.outbox.table.json.payload.null.behavior': 'optional_bytes',
    'transforms.outbox.table.json.payload.empty.array.behavior': 'optional_string',
    'transforms.outbox.table.fields.additional.placement': additionalHeaders.join(','),
    'transforms.outbox.route.by.field': 'aggregate_type',
    'transforms.outbox.route.topic.replacement': `${options.topicPrefix}\${routedByValue}.events`,
    'transforms.dropEventIdHeader.type': 'org.apache.kafka.connect.transforms.DropHeaders',
    'transforms.dropEventIdHeader.headers': 'id',
    // ce_specversion "1.0" takes two steps: InsertHeader parses its literal as a Connect value, and
    // 1.0 becomes the number 1 (the header would read "1"). InsertField's static value stays a
    // string; HeaderFrom then moves that field from the value into the header.
    'transforms.specversionField.type': 'org.apache.kafka.connect.transforms.InsertField$Value',
    'transforms.specversionField.static.field': 'ce_specversion',
    'transforms.specversionField.static.value': '1.0',
    'transforms.specversionHeader.type': 'org.apache.kafka.connect.transforms.HeaderFrom$Value',
    'transforms.specversionHeader.fields': 'ce_specversion',
    'transforms.specversionHeader.headers': 'ce_specversion',
    'transforms.specversionHeader.operation': 'move',
    'transforms.contentType.type': 'org.apache.kafka.connect.transforms.InsertHeader',
    'transforms.contentType.header': 'content-type',
    'transforms.contentType.value.literal': 'application/json',
    ...(options.exactlyOnce ? { 'exactly.once.support': 'required', 'transaction.boundary': 'poll' } : {}),
  };
}
