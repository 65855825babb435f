// The console's read routes for the system around the orders: what this console can do, the
// outboxes and their relays, the consumers and dead letters, Kafka, and Prometheus' charts and alerts.
import express from 'express';
import type { Config } from './config.ts';
import type { ConsoleDeps } from './consoleDeps.ts';
import { prometheusClient } from './prometheus.ts';
import { alertsView } from './readModels/alerts.ts';
import { catalog } from './readModels/catalog.ts';
import { chartsView } from './readModels/charts.ts';
import { consumerViews } from './readModels/consumers.ts';
import { outboxView } from './readModels/outboxes.ts';
import { serviceNamed } from './services.ts';
import type { Backend, ConsoleInfo, ConsumersResponse, OutboxResponse } from './shared/apiTypes.ts';

export function systemRouter({
  config,
  services,
  deadLetters,
  kafka,
  controls,
}: ConsoleDeps): express.Router {
  const router = express.Router();
  const adminToken = config.CONSOLE_ADMIN_TOKEN;
  router.get('/info', async (_req, res) => {
    const info: ConsoleInfo = {
      adminActions: adminToken !== undefined,
      redrive: adminToken !== undefined && config.RELAY_ADMIN_TOKEN !== undefined,
      demoControls: adminToken !== undefined && controls !== undefined,
      links: links(config),
      backends: backends(config),
      catalog: await catalog(serviceNamed(services, 'orders'), serviceNamed(services, 'inventory')),
    };
    res.json(info);
  });
  router.get('/kafka', async (_req, res) => {
    res.json(await kafka.read());
  });
  router.get('/outbox', async (_req, res) => {
    const body: OutboxResponse = { services: await Promise.all(services.map(outboxView)) };
    res.json(body);
  });
  router.get('/consumers', async (_req, res) => {
    const body: ConsumersResponse = {
      consumers: (await Promise.all(services.map(consumerViews))).flat(),
      deadLetters: deadLetters.snapshot(),
    };
    res.json(body);
  });
  // The charts and the alerts read Prometheus; without one the page says what is missing instead.
  const prometheusApi = config.PROMETHEUS_API_URL ?? config.PROMETHEUS_URL;
  if (prometheusApi) {
    const prometheus = prometheusClient(prometheusApi);
    router.get('/charts', async (_req, res) => {
      res.json(await chartsView(prometheus));
    });
    router.get('/alerts', async (_req, res) => {
      res.json(await alertsView(prometheus));
    });
  }
  return router;
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
