// The JSON the console's server sends its page. Types only: the browser code imports them too
// (`import type`), so both sides are checked against the same shapes.

import type { WriteMode } from '@outbox/contracts';

export type ServiceName = 'orders' | 'inventory' | 'billing';

/** GET /api/info: what this console can do, so the page shows only what works. */
export type ConsoleInfo = {
  /** Admin actions exist (CONSOLE_ADMIN_TOKEN is set); each one needs the token. */
  adminActions: boolean;
  /** Dead-lettered outbox events can be redriven through the relays. */
  redrive: boolean;
  /** The local demo's stop / kill -9 / start buttons for the broker, the services and the relays. */
  demoControls: boolean;
  links: { title: string; url: string }[];
  /** The demo's Prometheus (charts, alerts) and trace backend: there, or what is missing. */
  backends: { prometheus: Backend; traces: Backend };
  catalog: {
    sku: string;
    name: string;
    unitPriceCents: string;
    currency: string;
    available: number | null;
  }[];
};

/**
 * A backend the console reads when it is configured. When it is not, `missing` says what is
 * missing and `install` the one command that gets it, so the page never shows an empty box.
 */
export type Backend =
  | { available: true; url: string }
  | { available: false; missing: string; install: string };

export type OrderView = {
  id: string;
  customerId: string;
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED';
  stockStatus: string | null;
  paymentStatus: string | null;
  cancelReason?: string;
  totalCents: string;
  currency: string;
  createdAt: string;
  items: { sku: string; quantity: number }[];
  history: { event: string; detail: string | null; at: string }[];
  traceUrl?: string;
  /**
   * Set when the order's trace was sampled out (its traceparent's sampled flag is 0, docs/tracing.md
   * "Sampling"): it was recorded nowhere, so there is no `traceUrl`.
   */
  sampledOut?: true;
  /**
   * Set when the order looks LOST: PENDING for a while, with no ORDER_CREATED in the outbox and
   * nothing in inventory or billing. Only a naive write mode leaves orders like that.
   */
  lost?: true;
};

/**
 * A GHOST: stock reserved or a payment made for an order id the orders database does not have,
 * which only an event sent for a transaction that then rolled back can cause (publish-then-commit).
 */
export type GhostOrderView = { id: string; reservation: string | null; payment: string | null; at: string };

/** Whether the trace store answers now (the console probes it, apps/console/src/traceStore.ts). */
export type TracesStatus = { available: true } | { available: false; reason: string };

/** GET /api/orders */
export type OrdersResponse = {
  orders: OrderView[];
  ghosts: GhostOrderView[];
  /**
   * Present when the console reads a trace store (ZIPKIN_URL). While it does not answer, the
   * orders carry no `traceUrl`: the page says "traces unavailable" instead of linking.
   */
  traces?: TracesStatus;
  /** Orders' write mode, from its /healthz (absent when orders did not answer). */
  writeMode?: string;
  error?: string;
};

export type OutboxRowView = {
  id: string;
  eventType: string;
  aggregateId: string;
  status: 'pending' | 'in_flight' | 'published' | 'failed';
  attempts: number;
  lastError: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
  nextAttemptAt: string;
  createdAt: string;
  publishedAt: string | null;
};

export type RelayHealth = {
  status: 'ok' | 'degraded' | 'down' | 'unreachable';
  detail?: string;
  /** How the outbox is published (docs/design.md#polling-or-cdc); missing while the relay is unreachable. */
  mode?: 'polling' | 'debezium';
  /** Debezium mode: the connector and its replication slot, as the relay reports them on /healthz. */
  cdc?: {
    connector: string;
    connectorState?: string;
    taskStates?: string[];
    slot?: { name: string; active: boolean; retainedWalBytes: number; unconfirmedWalBytes: number };
    slotError?: string;
  };
};

export type OutboxView = {
  service: ServiceName;
  relay: RelayHealth;
  /** Missing when the database could not be read; `error` says why. */
  stats?: { pending: number; inFlight: number; failed: number; oldestUnpublishedSeconds: number };
  newest: OutboxRowView[];
  failed: OutboxRowView[];
  error?: string;
};

/** GET /api/outbox */
export type OutboxResponse = { services: OutboxView[] };

export type ConsumerView = {
  /** The consumer group, also the consumer's name in processed_events. */
  consumer: string;
  service: ServiceName;
  /** Rows in processed_events: every event this consumer has applied, ever. */
  processed: number | null;
  /** From the process's /metrics, since it started. */
  sinceStart: { applied: number; duplicates: number; ignored: number; deadLettered: number } | null;
  lag: number | null;
  error?: string;
};

export type DeadLetterView = {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  eventType: string | null;
  eventId: string | null;
  reason: string | null;
  consumer: string | null;
  time: string | null;
};

/** GET /api/consumers */
export type ConsumersResponse = {
  consumers: ConsumerView[];
  deadLetters: {
    topics: string[];
    messages: DeadLetterView[];
    status: 'reading' | 'connecting';
    error?: string;
  };
};

export type ProcessStatus = { running: boolean; busy: boolean; lastError?: string };

/** GET /api/kafka: the brokers the cluster lists, and who leads each partition of the event topics. */
export type KafkaTopology = {
  brokers: { nodeId: number; address: string }[];
  /** The active controller's node id, when the cluster has one. */
  controller: number | null;
  partitions: { topic: string; partition: number; leader: number; replicas: number[]; isr: number[] }[];
  /** The consumer groups reading the event topics: their instances and which partitions each holds. */
  groups: ConsumerGroupView[];
  /** Kafka did not answer (every broker down). */
  error?: string;
};

export type ConsumerGroupView = {
  groupId: string;
  /** Kafka's word for it: Stable, or PreparingRebalance / CompletingRebalance while partitions move. */
  state: string;
  /** memberId: the id the coordinator gave the instance (clientId and a uuid), one per running instance. */
  members: { clientId: string; memberId: string; host: string; partitions: string[] }[];
  /** Times the console saw the group's assignment change since it started, and the last one. */
  rebalancesSeen: number;
  lastRebalanceAt?: string;
};

/** GET /api/demo: only in demo mode. */
export type DemoStatus = {
  /** `broker` (the demo's single broker) or `broker-1`… (each node of the cluster). */
  brokers: Record<string, ProcessStatus>;
  services: Record<string, ProcessStatus>;
  /** Present when the demo lets the console switch orders' write mode. */
  writeMode?: { modes: readonly WriteMode[]; current?: string };
  /** `./dev demo --failover`: each service database's primary, standby and what a failover cost. */
  databases?: DatabasePairView[];
};

/** One service database on a primary and a streaming standby (the demo's `--failover`). */
export type DatabasePairView = {
  database: ServiceName;
  replication: 'async' | 'sync';
  /** The relay and the consumers of this database wait for the standby before announcing. */
  standbyWait: boolean;
  /** Port of the primary; `alive` false between its kill -9 and the promotion. */
  primary: { port: number; alive: boolean };
  /** Undefined between a promotion and the next rebuild. */
  standby?: { port: number; receiving: boolean };
  /** WAL the standby has not flushed yet, in bytes; null when it cannot be read (no primary, no standby). */
  lagBytes: number | null;
  /** The last failover of this database, once its standby was promoted. */
  cost?: FailoverCost;
  busy: boolean;
  lastError?: string;
};

/** What a failover cost: read from the dead primary just before its kill, the promoted one and Kafka. */
export type FailoverCost = {
  killedAt: string;
  /** Rows the dead primary had committed that the promoted one does not have: orders (orders' database only) and outbox events. */
  ordersLost: number;
  eventsLost: number;
  /** Of the lost events, those on Kafka: announced, though the database no longer has them (ghosts). */
  eventsAnnounced: number;
  /** Orders created before the kill that are still PENDING now (read each time). */
  ordersUndecided: number | null;
};

/**
 * A problem+json body (RFC 9457), as the orders API and the console send them
 * (packages/runtime/src/problem.ts; the browser code cannot import it, it is Node code).
 */
export type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: { pointer?: string; parameter?: string; header?: string; detail: string }[];
};

export type ChartView = {
  /** infra/grafana/src/charts.ts's id (data-chart on the page). */
  id: string;
  title: string;
  description: string;
  unit: 'ops' | 's' | 'short';
  /** The PromQL, as the Grafana dashboard has it (shown on the page: no hidden magic). */
  queries: string[];
  threshold?: { value: number; alert: string };
  /** One value per `times` entry, null where Prometheus has no sample. */
  series: { label: string; values: (number | null)[] }[];
  error?: string;
};

/** GET /api/charts: only with Prometheus. */
export type ChartsResponse = {
  /** Unix seconds, shared by every series of every chart. */
  times: number[];
  /** What the dashboards' `$__rate_interval` became. */
  rateWindow: string;
  charts: ChartView[];
};

export type AlertView = {
  name: string;
  state: 'pending' | 'firing';
  severity: string;
  labels: Record<string, string>;
  summary: string;
  description: string;
  /** The section of docs/runbooks.md, served by the console at /runbooks/<anchor>. */
  runbook: string | null;
  activeAt: string;
  /** The rule's `for:`: how long it stays pending before it fires. */
  forSeconds: number;
};

/** GET /api/alerts: only with Prometheus. */
export type AlertsResponse = {
  alerts: AlertView[];
  /** Every alerting rule Prometheus loaded. */
  rules: string[];
  /** How often Prometheus evaluates the rules; null when it could not be read. */
  evaluationSeconds: number | null;
  error?: string;
};
