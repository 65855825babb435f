// The sizing arithmetic of docs/scaling.md ("At 100× and 10,000× today's load"), each step inside
// its sentence (`<!-- figure:scaling-… -->`), computed from the costs its table of measured costs
// shows. Each operand is rounded as that table prints it, so a reader can redo the sum; the
// conclusions (how many shards, instances, partitions) follow from the figures, not from the text.
import { num } from './format.ts';
import { COST_SOURCES, measuredCosts } from './scaling.ts';
import type { FigureTable, Results } from './types.ts';

/** Orders per second at each scale, and events per second on each outbox at 100×. */
const HUNDRED = 30_000;
const TEN_THOUSAND = 3_000_000;
const ORDERS_OUTBOX = 2 * HUNDRED;
const PUBLISHED = 4 * HUNDRED;
const MIB = 1024 * 1024;

const round = (value: number, digits: number) => Number(value.toFixed(digits));
/** The named figures of `from`, each to two decimals (NaN where missing). */
const hundredths = <K extends string>(from: Partial<Record<string, number>>, keys: K[]) =>
  Object.fromEntries(keys.map((key) => [key, round(from[key] ?? Number.NaN, 2)])) as Record<K, number>;
const powerOfTwoAtLeast = (value: number) => 2 ** Math.ceil(Math.log2(Math.max(1, value)));
/** Shards of the orders outbox: the relays' worth it needs, rounded up to a power of two. */
const shardCount = (perRelay: number) => powerOfTwoAtLeast(Math.ceil(ORDERS_OUTBOX / perRelay));

/** The measured costs, rounded as the costs table shows them. */
function costs({ read }: Results) {
  const { capacity, cpu, relay, relayCpu, consumer, million, deleted, partitioned } = measuredCosts(read);
  return {
    capacity: capacity ?? Number.NaN,
    cpu: hundredths(cpu, ['total', 'postgres', 'orders']),
    relay: {
      one: Math.round(relay?.eventsPerSec.R1 ?? Number.NaN),
      two: Math.round(relay?.eventsPerSec.R2 ?? Number.NaN),
      cpu: hundredths(relayCpu, ['relays', 'broker', 'postgres']),
    },
    consumer: {
      inventory: Math.round(consumer?.eventsPerSec.I ?? Number.NaN),
      billing: Math.round(consumer?.eventsPerSec.B ?? Number.NaN),
    },
    retention: {
      mibPerMillion: round(million?.sizes.totalMiB ?? Number.NaN, 1),
      deletesPerSec: Math.round(deleted.rowsPerSec),
      walBytesPerRow: Math.round((deleted.walMiB * MIB) / deleted.rowsDeleted),
      fastestPartitioned: round(Math.min(...partitioned), 2),
      slowestPartitioned: round(Math.max(...partitioned), 2),
    },
  };
}

type Costs = ReturnType<typeof costs>;

/** A figure of the costs. */
const fromCosts = (render: (costs: Costs) => string): FigureTable => ({
  sources: COST_SOURCES,
  render: (results) => render(costs(results)),
});

/** "30,000 × 5.95 ms = 179": the cores `orders` per second keep busy at `ms` of CPU each. */
const cores = (orders: number, ms: number) =>
  `${num(orders)} × ${num(ms, 2)} ms = ${num((orders * ms) / 1000)}`;

const cpuAtHundred = fromCosts(
  ({ cpu }) =>
    `${cores(HUNDRED, cpu.total).replace(/= (.*)$/, '= **$1 cores**')} of work at today's efficiency. ` +
    `PostgreSQL alone is ${cores(HUNDRED, cpu.postgres)} cores and the orders API ${cores(HUNDRED, cpu.orders)} cores`,
);

const cpuAtTenThousand = fromCosts(
  ({ cpu }) =>
    `${cores(TEN_THOUSAND, cpu.total).replace(/= (.*)$/, '= **$1 cores**')}. ` +
    `PostgreSQL is ${cores(TEN_THOUSAND, cpu.postgres)} cores`,
);

const relays = fromCosts(({ relay }) => {
  const needed = ORDERS_OUTBOX / relay.one;
  return (
    `One table with competing relays reached ${num(relay.two)} events/s. The orders outbox needs ` +
    `${num(ORDERS_OUTBOX)} / ${num(relay.one)} = ${num(needed, 1)} relays' worth of claims, so at least ` +
    `${num(Math.ceil(needed))} tables that are claimed independently`
  );
});

const shards = fromCosts(({ relay }) => {
  const count = shardCount(relay.one);
  const others = HUNDRED / relay.one;
  return (
    `Use a fixed number of shards, for example ${count}, which leaves ${count} × ${num(relay.one)} / ` +
    `${num(ORDERS_OUTBOX)} = ${num((count * relay.one) / ORDERS_OUTBOX, 1)}× headroom. Inventory and billing need ` +
    `${num(HUNDRED)} / ${num(relay.one)} = ${num(others, 1)}, so ${powerOfTwoAtLeast(Math.ceil(others))} each`
  );
});

const relayCpu = fromCosts(({ relay }) => {
  const { relays, broker, postgres } = relay.cpu;
  const perEvent = relays + broker + postgres;
  return (
    `${num(PUBLISHED)} events/s × (${num(relays, 2)} + ${num(broker, 2)} + ` +
    `${num(postgres, 2)}) ms = ${num((PUBLISHED * perEvent) / 1000, 1)} cores`
  );
});

const retention = fromCosts(({ retention: r }) => {
  const rowsPerDay = ORDERS_OUTBOX * 86_400;
  const tib = (rowsPerDay / 1e6) * r.mibPerMillion * MIB;
  const walPerSec = ORDERS_OUTBOX * r.walBytesPerRow;
  return (
    `At ${num(r.mibPerMillion, 1)} MiB per million rows that is about ${num(tib / 1024 ** 4, 1)} TiB. ` +
    `Deleting them takes ${num(ORDERS_OUTBOX)} deletes/s, ${num((100 * ORDERS_OUTBOX) / r.deletesPerSec)}% of the ` +
    `${num(r.deletesPerSec)} rows/s one connection managed, and ${num(ORDERS_OUTBOX)} × ${num(r.walBytesPerRow)} bytes = ` +
    `${num(walPerSec / 1e6)} MB/s of WAL (${num((walPerSec * 86_400) / 1e12, 1)} TB a day)`
  );
});

const oneHour = fromCosts(({ retention: r }) => {
  const rows = ORDERS_OUTBOX * 3_600;
  return `${num(ORDERS_OUTBOX)} × 3,600 = ${num(rows / 1e6)} million rows, about ${num((rows / 1e6) * (r.mibPerMillion / 1024))} GiB`;
});

const partitionedShards = fromCosts(({ relay, retention: r }) => {
  const count = shardCount(relay.one);
  const reach = (shards: number) => (shards * relay.one) / r.slowestPartitioned;
  let enough = count;
  while (reach(enough) < ORDERS_OUTBOX) enough *= 2;
  const factor = `${num(r.fastestPartitioned, 2)}–${num(r.slowestPartitioned, 2)}×`;
  const sum = `Partitioning made the claim ${factor} slower. Size the shards with that factor: ${count} shards × ${num(relay.one)} / ${num(r.slowestPartitioned, 2)} = ${num(Math.round(reach(count) / 100) * 100)}`;
  return enough === count
    ? `${sum} events/s is above ${num(ORDERS_OUTBOX)}, so **${count} shards** still do for the orders outbox`
    : `${sum} events/s is below ${num(ORDERS_OUTBOX)}, so use **${enough} shards** for the orders outbox`;
});

const consumersAtHundred = fromCosts(({ consumer }) => {
  const inventory = HUNDRED / consumer.inventory;
  const billing = HUNDRED / consumer.billing;
  return (
    `${num(HUNDRED)} / ${num(consumer.inventory)} = ${num(inventory, 1)} instances' worth, so at least ` +
    `${Math.ceil(inventory)}. Billing needs ${num(HUNDRED)} / ${num(consumer.billing)} = ${num(billing, 1)}, ` +
    `so ${Math.ceil(billing)}`
  );
});

const consumersAtTenThousand = fromCosts(({ consumer }) => {
  const instances = Math.ceil(TEN_THOUSAND / consumer.inventory);
  return (
    `${num(TEN_THOUSAND)} / ${num(consumer.inventory)} = ${num(instances)} instances, so \`order.events\` needs ` +
    `at least ${num(instances)} partitions (${num(powerOfTwoAtLeast(instances))}, say)`
  );
});

const stacks = fromCosts(
  ({ capacity }) =>
    `${num(capacity)} orders/s per stack that is ${num(TEN_THOUSAND / capacity)} stacks' worth of work`,
);

export const SCALING_ARITHMETIC: Record<string, FigureTable> = {
  'scaling-100x-cpu': cpuAtHundred,
  'scaling-100x-relays': relays,
  'scaling-100x-shards': shards,
  'scaling-100x-relay-cpu': relayCpu,
  'scaling-100x-retention': retention,
  'scaling-100x-one-hour': oneHour,
  'scaling-100x-partitioned-shards': partitionedShards,
  'scaling-100x-consumers': consumersAtHundred,
  'scaling-10000x-cpu': cpuAtTenThousand,
  'scaling-10000x-consumers': consumersAtTenThousand,
  'scaling-10000x-stacks': stacks,
};
