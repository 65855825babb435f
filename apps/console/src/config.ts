import { kafkaBrokers, logLevel, port, postgresUrl, topicPrefix } from '@outbox/runtime/config';
import { kafkaSecuritySettings, refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import { z } from 'zod';
import type { ServiceName } from './shared/apiTypes.ts';

const httpUrl = (fallback: string) =>
  z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:3001' })
    .default(fallback)
    .transform((url) => url.replace(/\/+$/, ''));

const token = z.string().min(16, 'use at least 16 characters').optional();

/**
 * The console reads what the system already exposes: each service database (its outbox and
 * processed_events), each process's /healthz and /metrics, the orders API, and the dead-letter
 * topics. The URL defaults are the ports of the local demo (`./dev demo`).
 */
export const configSchema = refineKafkaSecurity(
  z.object({
    // 8080, not 3000: docker compose publishes Grafana on 3000.
    PORT: port(8080),
    LOG_LEVEL: logLevel,
    /** The orders API: the form posts through it, the orders view reads it. Also its /metrics. */
    ORDERS_URL: httpUrl('http://127.0.0.1:3001'),
    /** Health and metrics of the two consumers. */
    INVENTORY_URL: httpUrl('http://127.0.0.1:3003'),
    BILLING_URL: httpUrl('http://127.0.0.1:3004'),
    /** Health (and POST /admin/redrive) of the relay of each service database. */
    RELAY_ORDERS_URL: httpUrl('http://127.0.0.1:3002'),
    RELAY_INVENTORY_URL: httpUrl('http://127.0.0.1:3005'),
    RELAY_BILLING_URL: httpUrl('http://127.0.0.1:3006'),
    /** Each service's own database; the console only reads them. */
    ORDERS_DATABASE_URL: postgresUrl,
    INVENTORY_DATABASE_URL: postgresUrl,
    BILLING_DATABASE_URL: postgresUrl,
    /** For the dead-letter topics (`<prefix><aggregate>.events.dlt`). */
    KAFKA_BROKERS: kafkaBrokers,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    ...kafkaSecuritySettings,
    /** Bearer token for every admin action of the console; without it there are none (404). */
    CONSOLE_ADMIN_TOKEN: token,
    /**
     * Bearer token every /api read needs (the orders, the outboxes, the consumers, ...), the admin
     * token too; without it reads need none: the console then relies on where it listens (docs/production.md).
     */
    CONSOLE_READ_TOKEN: token,
    /** The relays' RELAY_ADMIN_TOKEN; without it the console cannot redrive dead-lettered events. */
    RELAY_ADMIN_TOKEN: token,
    /**
     * Host headers the console answers to besides its own loopback address and port, comma-separated
     * host:port (e.g. console.internal:8080 behind a proxy). Anything else gets 403 (DNS rebinding).
     */
    CONSOLE_HOSTS: z
      .string()
      .default('')
      .transform((list) =>
        list
          .split(',')
          .map((host) => host.trim())
          .filter(Boolean),
      ),
    /** Links to the dashboards, e.g. http://127.0.0.1:3000, where docker compose publishes Grafana. */
    GRAFANA_URL: z.url().optional(),
    /** Prometheus as the browser reaches it: the page's link to its alerts. */
    PROMETHEUS_URL: z.url().optional(),
    /**
     * Where the console itself reads Prometheus (its charts and alerts), when that is not where the
     * browser reaches it: in docker compose, `http://prometheus:9090` inside the network against
     * `http://127.0.0.1:9090` on the host. Unset: PROMETHEUS_URL, as in `./dev demo`.
     */
    PROMETHEUS_API_URL: z.url().optional(),
    /**
     * Zipkin's API (the local demo's trace backend): each order's trace is read from it for the
     * order's timeline, and without it the page says how to get traces.
     */
    ZIPKIN_URL: z.url().optional(),
    /** Link to one order's trace, e.g. http://127.0.0.1:16686/trace/{traceId} (Jaeger) or
     * http://127.0.0.1:9411/zipkin/traces/{traceId} (Zipkin, as the demo sets it). */
    TRACE_URL_TEMPLATE: z.string().includes('{traceId}', { error: 'must contain {traceId}' }).optional(),
  }),
);

export type Config = z.output<typeof configSchema>;

/** The three service databases, each with its own outbox and its own relay. */
export const SERVICE_NAMES = ['orders', 'inventory', 'billing'] as const satisfies readonly ServiceName[];
export type { ServiceName };
