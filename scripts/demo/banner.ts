// What the demo prints once everything runs: where to click, what to curl, what to break.
import { styleText } from 'node:util';
import { DEMO_PROMETHEUS_INTERVAL_SECONDS } from '@outbox/devstack/prometheus-config';
import type { DatabaseUrls } from './apps.ts';
import { running } from './lifecycle.ts';
import { describePassOn } from './passOn.ts';
import type { DemoSettings } from './settings.ts';

export function banner(
  settings: DemoSettings,
  postgres: string,
  databaseUrls: DatabaseUrls,
  brokers: string[],
): string {
  const { ports, modes, consoleToken, prometheusPort } = settings;
  const { consoleApp, prometheus, zipkin, embeddedPostgres, connect } = running;
  const psql = (url: string) => {
    const { hostname, port, username, pathname } = new URL(url);
    return `psql -h ${hostname} ${port && port !== '5432' ? `-p ${port} ` : ''}-U ${username || 'postgres'} -d ${pathname.slice(1)}`;
  };
  return `
${styleText('bold', 'The outbox demo is running.')}

  ${styleText(['bold', 'green'], `open ${consoleApp?.url}/#token=${consoleToken}`)}
  the web console: place orders, watch the saga, the outboxes and the consumers, break the broker
  (the #token part signs you in for the stop / kill -9 / start buttons of the broker, the services
  and the relays; admin token ${consoleToken})
${prometheus ? `\n  Prometheus       http://127.0.0.1:${prometheusPort} (alerts: /alerts; scrapes and evaluates every ${DEMO_PROMETHEUS_INTERVAL_SECONDS} s, production 15 s)` : ''}${zipkin ? `\n  Zipkin           ${zipkin.url}/zipkin/ (every order's trace; the console links each one)` : ''}${prometheus || zipkin ? '\n' : ''}${embeddedPostgres ? `\n  PostgreSQL       ${postgres} (embedded: no server answered there; data in ${embeddedPostgres.dataDir})\n` : ''}
  orders API       http://127.0.0.1:${ports.orders}/orders
  inventory        http://127.0.0.1:${ports.inventory}/healthz
  billing          http://127.0.0.1:${ports.billing}/healthz
  relays           http://127.0.0.1:${ports['relay-orders']}/healthz (orders outbox), :${ports['relay-inventory']} (inventory), :${ports['relay-billing']} (billing)
                   modes: orders ${modes.orders}, inventory ${modes.inventory}, billing ${modes.billing}${connect ? ` (Kafka Connect ${connect.url})` : ''}
  Kafka            ${brokers.join(',')}
  every process has /metrics next to /healthz
${settingsLines(settings)}
Or from a terminal: place an order
  curl -s -X POST http://127.0.0.1:${ports.orders}/orders -H 'content-type: application/json' \\
    -d '{"customerId":"alice","currency":"EUR","items":[{"sku":"KB-101","quantity":1}]}'

Then follow it: PENDING, then CONFIRMED once stock is reserved and payment authorized
  curl -s http://127.0.0.1:${ports.orders}/orders/<id>
  ${psql(databaseUrls.inventory)} -c 'select * from reservations'
  ${psql(databaseUrls.billing)} -c 'select * from payments'
A customer id starting with "declined" is declined by the simulated payment provider; ordering
more than the stock (e.g. 30 of MN-303) is rejected by inventory: both end CANCELLED.

${failoverLines(settings)}${
  settings.onCluster
    ? `Kill a broker (the console's buttons, or another terminal) and watch its partitions move, then come back:
  ./dev kafka kill --cluster --node 2     …place orders…     ./dev kafka start --cluster --node 2`
    : `Kill the broker (the console's buttons, or another terminal) and watch the relay degrade, then recover:
  ./dev kafka kill     …place orders…     ./dev kafka start`
}
A walkthrough: docs/walkthrough.md

Ctrl-C stops everything.
`;
}

/** Your settings: what reached which process, and what did not and why (passOn.ts). */
function settingsLines(settings: DemoSettings): string {
  const lines = describePassOn(settings.passedOn);
  if (lines.length === 0) return '';
  return `\nYour settings for the processes:\n${lines.map((line) => `  ${line}`).join('\n')}\n`;
}

/** --failover: where the buttons are, and what the standby wait does here. */
function failoverLines(settings: DemoSettings): string {
  const failover = settings.failover;
  if (!failover) return '';
  const wait = failover.standbyWait
    ? 'the relays and consumers wait for the standby before announcing (DATABASE_WAIT_FOR_STANDBY=any)'
    : failover.replication === 'sync'
      ? 'a commit returns once the standby has it'
      : 'nothing waits for the standby (--no-standby-wait): a failover can leave ghosts';
  return `Fail a database over from the console's "Databases" panel: pause the standby's receipt, kill -9
the primary, promote the standby, rebuild one; the panel then says what the failover cost.
Each database's standby is ${failover.replication === 'sync' ? 'synchronous' : 'asynchronous'}; ${wait}.

`;
}
