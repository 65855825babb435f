import { EVENT_HEADERS, type EventEnvelope, toKafkaMessage } from '@outbox/contracts';
import { describe, expect, it, vi } from 'vitest';
import { type CdcConnectorOptions, renderCdcConnectorConfig } from '../src/cdcConnector.ts';
import { type OutboxRow, toEnvelope } from '../src/outboxRow.ts';

// EVENT_HEADERS (packages/contracts/src/eventHeaders.ts) is the one table of outbox column →
// CloudEvents attribute → Kafka header: the polling relay's toKafkaMessage and the CDC relay's
// connector config both read it, so the two relay modes put the same headers on the wire.
// tests/cdc/cdc.publishes-the-same-messages-as-the-polling-relay.test.ts compares real messages.

const options: CdcConnectorOptions = {
  databaseUrl: 'postgresql://postgres@127.0.0.1:5432/orders',
  topicPrefix: '',
  topicPartitions: 6,
  slotName: 'orders_outbox',
  publicationName: 'orders_outbox',
  serverName: 'orders',
};

const row: OutboxRow = {
  id: '6f1c7c1e-2b7a-4d0e-9a51-0c7f8d3e2a10',
  seq: '1',
  source: '/orders',
  aggregate_type: 'order',
  aggregate_id: 'order-1',
  event_type: 'ORDER_CREATED',
  schema_version: 1,
  payload: { orderId: 'order-1' },
  headers: {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'vendor=value',
  },
  attempts: 0,
  created_at: new Date('2025-01-02T03:04:05.678Z'),
};

/** The connector's additional placement, as [column, header] pairs. */
function placed(config: Record<string, string>): string[][] {
  return (config['transforms.outbox.table.fields.additional.placement'] ?? '')
    .split(',')
    .map((entry) => entry.split(':header:'));
}

/** The header and value each constant transform inserts, in the transforms' order. */
function inserted(config: Record<string, string>): string[][] {
  return (config.transforms ?? '')
    .split(',')
    .filter((name) => config[`transforms.${name}.type`]?.endsWith('InsertField$Value'))
    .map((name) => [
      config[`transforms.${name}.static.field`] ?? '',
      config[`transforms.${name}.static.value`] ?? '',
    ]);
}

describe('the event headers table', () => {
  it('gives toKafkaMessage every header it sends, in the table order', () => {
    const message = toKafkaMessage(toEnvelope(row));
    expect(Object.keys(message.headers)).toEqual(EVENT_HEADERS.flatMap((entry) => entry.headers));
    const envelope = toEnvelope(row);
    for (const { attribute, headers } of EVENT_HEADERS) {
      for (const header of headers) expect(message.headers[header]).toBe(String(envelope[attribute]));
    }
  });

  it('gives the connector every column it places and every constant it inserts', () => {
    const config = renderCdcConnectorConfig(options);
    expect(placed(config)).toEqual(
      EVENT_HEADERS.flatMap(({ column, headers }) =>
        column ? headers.map((header) => [column, header]) : [],
      ),
    );
    expect(inserted(config)).toEqual(
      EVENT_HEADERS.flatMap(({ constant, headers }) => (constant ? [[headers[0], constant]] : [])),
    );
  });

  it('names the columns the polling relay reads each header from', () => {
    const headers = toKafkaMessage(toEnvelope(row)).headers;
    // The values as Debezium prints the columns: created_at with three fraction digits, and the
    // traceparent column the trigger of migration 005 copies from `headers`.
    const columns: Record<string, unknown> = {
      ...row,
      created_at: row.created_at.toISOString(),
      traceparent: row.headers.traceparent,
    };
    const fromColumns = EVENT_HEADERS.filter((entry) => entry.column);
    expect(fromColumns.map((entry) => entry.column)).toEqual([
      'id',
      'source',
      'event_type',
      'created_at',
      'aggregate_id',
      'aggregate_type',
      'schema_version',
      'traceparent',
    ]);
    for (const { column = '', headers: names } of fromColumns) {
      for (const name of names) expect(headers[name], name).toBe(String(columns[column]));
    }
  });

  it('sends no trace header from the polling relay for an untraced event', () => {
    const headers = toKafkaMessage(toEnvelope({ ...row, headers: {} })).headers;
    expect(Object.keys(headers)).not.toContain('traceparent');
    expect(Object.keys(headers)).not.toContain('ce_traceparent');
    expect(Object.keys(headers)).toHaveLength(9);
  });

  it('changes both relay modes when a column is added to it', async () => {
    vi.resetModules();
    vi.doMock('../../contracts/src/eventHeaders.ts', async (importOriginal) => {
      const original = await importOriginal<typeof import('../../contracts/src/eventHeaders.ts')>();
      return {
        ...original,
        EVENT_HEADERS: [
          ...original.EVENT_HEADERS,
          { attribute: 'tenant', headers: ['ce_tenant'], column: 'tenant_id' },
        ],
      };
    });
    try {
      const contracts = await import('@outbox/contracts');
      const outbox = await import('../src/cdcConnector.ts');
      const event = { ...toEnvelope(row), tenant: 'acme' } as EventEnvelope;
      expect(contracts.toKafkaMessage(event).headers.ce_tenant).toBe('acme');
      expect(placed(outbox.renderCdcConnectorConfig(options))).toContainEqual(['tenant_id', 'ce_tenant']);
      // Without the column, neither sends it.
      expect(toKafkaMessage(event).headers.ce_tenant).toBeUndefined();
      expect(placed(renderCdcConnectorConfig(options))).not.toContainEqual(['tenant_id', 'ce_tenant']);
    } finally {
      vi.doUnmock('../../contracts/src/eventHeaders.ts');
      vi.resetModules();
    }
  });
});
