import { requireBearerToken } from '@outbox/runtime/bearer-auth';
import type { Logger } from '@outbox/runtime/logger';
import { HttpProblem, notFound, problemHandler } from '@outbox/runtime/problem';
import express from 'express';
import { z } from 'zod';
import type { Config, ServiceName } from './config.ts';
import type { DeadLetterWatcher } from './deadLetterWatcher.ts';
import { type DemoControls, demoControlsRouter } from './demoControls.ts';
import { requireOwnHost } from './hostCheck.ts';
import { prometheusClient } from './prometheus.ts';
import { alertsView } from './readModels/alerts.ts';
import { catalog } from './readModels/catalog.ts';
import { chartsView } from './readModels/charts.ts';
import { consumerViews } from './readModels/consumers.ts';
import type { KafkaTopologyReader } from './readModels/kafkaTopology.ts';
import { ordersView } from './readModels/orders.ts';
import { orderTimelineView } from './readModels/orderTimeline.ts';
import { outboxView } from './readModels/outboxes.ts';
import { redriveRouter } from './redriveRouter.ts';
import { runbookHandler } from './runbooks.ts';
import { fetchWithTimeout, type Service } from './services.ts';
import type { Backend, ConsoleInfo, ConsumersResponse, OutboxResponse } from './shared/api.ts';
import { staticFiles } from './staticFiles.ts';
import { TraceStoreProbe } from './traceStore.ts';

export type ConsoleDeps = {
  config: Config;
  services: Service[];
  deadLetters: DeadLetterWatcher;
  /** The brokers and partition leaders (readModels/kafkaTopology.ts). */
  kafka: KafkaTopologyReader;
  logger: Logger;
  /** The local demo's process controls. Absent everywhere else, and then so are their routes. */
  controls?: DemoControls;
};

/** Bodies the console accepts are tiny (an order, a redrive); anything bigger is a mistake. */
const BODY_LIMIT = '32kb';

/** Build the console's HTTP app without listening, so tests can drive it on an ephemeral port. */
export function createConsoleApp({
  config,
  services,
  deadLetters,
  kafka,
  logger,
  controls,
}: ConsoleDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requireOwnHost(config.CONSOLE_HOSTS));
  app.use(express.json({ limit: BODY_LIMIT }));
  const service = (name: ServiceName): Service => {
    const found = services.find((s) => s.name === name);
    if (!found) throw new Error(`no service named ${name}`);
    return found;
  };
  const adminToken = config.CONSOLE_ADMIN_TOKEN;
  const prometheus = config.PROMETHEUS_URL ? prometheusClient(config.PROMETHEUS_URL) : undefined;

  // For a container's healthcheck: the console process answers. (What it shows is the others' health.)
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/api/info', async (_req, res) => {
    const info: ConsoleInfo = {
      adminActions: adminToken !== undefined,
      redrive: adminToken !== undefined && config.RELAY_ADMIN_TOKEN !== undefined,
      demoControls: adminToken !== undefined && controls !== undefined,
      links: links(config),
      backends: backends(config),
      catalog: await catalog(service('orders'), service('inventory')),
    };
    res.json(info);
  });

  const traceStore = config.ZIPKIN_URL ? new TraceStoreProbe(config.ZIPKIN_URL) : undefined;
  app.get('/api/orders', async (_req, res) => {
    const views = { orders: service('orders'), inventory: service('inventory'), billing: service('billing') };
    const [orders, traces] = await Promise.all([
      ordersView(config.ORDERS_URL, views, config.TRACE_URL_TEMPLATE, {
        dualWriteAnomalies: controls?.writeMode !== undefined,
      }),
      traceStore?.status(),
    ]);
    if (traces === undefined) {
      res.json(orders);
      return;
    }
    // No links into a trace store that does not answer: they would open an error page.
    const linked = traces.available
      ? orders.orders
      : orders.orders.map(({ traceUrl: _unavailable, ...order }) => order);
    res.json({ ...orders, orders: linked, traces });
  });

  // One order's events across the system, hop by hop: where the time went (the page's timeline).
  app.get('/api/orders/:id/timeline', async (req, res) => {
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) throw new HttpProblem(400, 'Invalid order id', 'The order id must be a UUID.');
    res.json(
      await orderTimelineView(id.data, {
        ordersUrl: config.ORDERS_URL,
        services,
        zipkinUrl: config.ZIPKIN_URL,
        traceUrlTemplate: config.TRACE_URL_TEMPLATE,
      }),
    );
  });

  // Placing an order writes, so it needs the admin token like every other action (the Host check
  // keeps other sites' pages out, but it is not authentication). The form posts here and the
  // console passes the body and its Idempotency-Key on untouched, so the page shows exactly what
  // the orders API answers (201, or a problem+json naming each bad field).
  if (adminToken !== undefined) {
    app.post('/api/orders', requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'), async (req, res) => {
      const key = req.get('idempotency-key');
      const answer = await fetchWithTimeout(
        `${config.ORDERS_URL}/orders`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          body: JSON.stringify(req.body),
        },
        // Longer than the API's own bounds (a statement, then the check of a commit whose answer
        // was lost), so the page shows the API's answer rather than the console's timeout.
        15_000,
      );
      for (const name of ['idempotent-replayed', 'retry-after']) {
        const value = answer.headers.get(name);
        if (value !== null) res.set(name, value);
      }
      res
        .status(answer.status)
        .type(answer.headers.get('content-type') ?? 'application/json')
        .send(await answer.text());
    });
  }

  app.get('/api/kafka', async (_req, res) => {
    res.json(await kafka.read());
  });

  app.get('/api/outbox', async (_req, res) => {
    const body: OutboxResponse = { services: await Promise.all(services.map(outboxView)) };
    res.json(body);
  });

  app.get('/api/consumers', async (_req, res) => {
    const body: ConsumersResponse = {
      consumers: (await Promise.all(services.map(consumerViews))).flat(),
      deadLetters: deadLetters.snapshot(),
    };
    res.json(body);
  });

  // The charts and the alerts read Prometheus; without one the page says what is missing instead.
  if (prometheus) {
    app.get('/api/charts', async (_req, res) => {
      res.json(await chartsView(prometheus));
    });
    app.get('/api/alerts', async (_req, res) => {
      res.json(await alertsView(prometheus));
    });
  }

  // Admin actions exist only with a token to protect them.
  if (adminToken !== undefined && config.RELAY_ADMIN_TOKEN !== undefined) {
    app.use(
      '/api/admin',
      requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'),
      redriveRouter(services, config.RELAY_ADMIN_TOKEN),
    );
  }
  if (adminToken !== undefined && controls !== undefined) {
    app.use('/api/demo', demoControlsRouter(controls, adminToken));
  }

  app.use('/api', (req, _res, next) => next(notFound(`No route for ${req.method} /api${req.path}.`)));
  app.get('/runbooks/:anchor', runbookHandler());
  app.use(staticFiles());
  app.use((req, _res, next) => next(notFound(`No page at ${req.path}.`)));
  app.use(problemHandler(logger));
  return app;
}

/** The dashboards of infra/grafana/dashboards, by their fixed uids, when Grafana is configured. */
function links(config: Config): ConsoleInfo['links'] {
  const result: ConsoleInfo['links'] = [];
  if (config.GRAFANA_URL) {
    const grafana = config.GRAFANA_URL.replace(/\/+$/, '');
    result.push(
      { title: 'Order flow (Grafana)', url: `${grafana}/d/outbox-order-flow` },
      { title: 'Outbox (Grafana)', url: `${grafana}/d/outbox-overview` },
      { title: 'Consumers (Grafana)', url: `${grafana}/d/outbox-consumers` },
      { title: 'Orders API (Grafana)', url: `${grafana}/d/outbox-orders-api` },
    );
  }
  if (config.PROMETHEUS_URL) {
    result.push({ title: 'Alerts (Prometheus)', url: `${config.PROMETHEUS_URL.replace(/\/+$/, '')}/alerts` });
  }
  return result;
}

/** What the page says instead of an empty chart, alert list or trace link. */
function backends(config: Config): ConsoleInfo['backends'] {
  const prometheus: Backend = config.PROMETHEUS_URL
    ? { available: true, url: config.PROMETHEUS_URL.replace(/\/+$/, '') }
    : {
        available: false,
        missing:
          'Prometheus is not running: the charts and the alerts read it. `./dev demo` starts it when the prometheus binary is installed.',
        install: 'sudo apt-get install -y prometheus   # then restart ./dev demo',
      };
  const traceUrl = config.ZIPKIN_URL ?? config.TRACE_URL_TEMPLATE;
  const traces: Backend = traceUrl
    ? { available: true, url: config.ZIPKIN_URL ?? traceUrl }
    : {
        available: false,
        missing:
          'No trace backend: `./dev demo` runs Zipkin from its Maven Central jar, which needs Java 17 and Maven (like the Kafka broker).',
        install: 'sudo apt-get install -y openjdk-17-jre-headless maven   # then restart ./dev demo',
      };
  return { prometheus, traces };
}
