// The load generator's command line: `npm run load -- --rate 50 --duration 30s` (flags: --help).
// Sends the orders, shows progress, waits for the saga to decide them, prints the summary.
import { writeFile } from 'node:fs/promises';
import { type CliConfig, parseCliArgs, USAGE, UsageError } from './cliArgs.ts';
import { scrapeDuplicates } from './duplicateMetrics.ts';
import { formatDuration } from './duration.ts';
import { getText } from './httpClient.ts';
import { collectOutcome, type Outcome } from './outcome.ts';
import { startProgressDisplay } from './progressBar.ts';
import { type LoadResult, runLoad } from './runLoad.ts';
import { formatMarkdown, formatSummary } from './summary.ts';

async function main(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let config: CliConfig;
  try {
    config = parseCliArgs(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`load: ${err.message}\nRun with --help to see every flag.`);
    return 2;
  }
  if (config.help) {
    console.log(USAGE);
    return 0;
  }

  const unreachable = await probe(config.url);
  if (unreachable) {
    console.error(
      `load: the orders API is not reachable at ${config.url} (${unreachable}).\n` +
        'Start the demo in another terminal with `./dev demo`, or point --url at a running orders API.',
    );
    return 1;
  }

  // The duplicate counters run since each service started: read them now, subtract at the end.
  const before = config.metricsUrls ? await scrapeDuplicates(config.metricsUrls) : undefined;

  // Ctrl-C stops sending; the orders already sent are still followed to their end and reported.
  // A second Ctrl-C leaves at once.
  const stop = new AbortController();
  process.on('SIGINT', () => {
    if (stop.signal.aborted) process.exit(130);
    console.error('\nStopping: no new orders; waiting for the ones sent (Ctrl-C again to quit now)…');
    stop.abort();
  });

  const result = await sendOrders(config, stop.signal);

  const accepted = result.orders.filter((order) => order.orderId !== undefined);
  console.log(
    `Waiting for the saga to decide ${accepted.length} accepted orders (up to ${formatDuration(config.waitMs)})…`,
  );
  const outcome = await collectOutcome({
    databaseUrls: config.databaseUrls,
    orderIds: accepted.map((order) => order.orderId as string),
    kinds: Object.fromEntries(accepted.map((order) => [order.orderId, order.kind])),
    timeoutMs: config.waitMs,
    metricsUrls: config.metricsUrls,
    duplicatesBefore: before?.byConsumer,
  });

  console.log(`\n${formatSummary(result, outcome)}`);
  await writeReports(config, result, outcome);
  return outcome.pending.length > 0 ? 1 : 0;
}

/** Says what it will send, then sends it with a progress line on stderr until done or Ctrl-C. */
async function sendOrders(config: CliConfig, signal: AbortSignal): Promise<LoadResult> {
  const pace = config.burst ? `as fast as ${config.concurrency} in flight allow` : `${config.rate}/s`;
  const amount = [
    config.count === undefined ? undefined : `${config.count} orders`,
    config.durationMs === undefined ? undefined : formatDuration(config.durationMs),
  ].filter(Boolean);
  console.log(`Sending ${amount.join(' or ')} at ${pace} to ${config.url}`);

  const progress = startProgressDisplay(process.stderr);
  return runLoad({ ...config, ordersUrl: config.url, signal, onProgress: progress.update }).finally(
    progress.stop,
  );
}

/** The summary again as JSON and Markdown files, when asked for. */
async function writeReports(config: CliConfig, result: LoadResult, outcome: Outcome): Promise<void> {
  if (config.jsonFile) {
    const { help: _help, databaseUrls, ...flags } = config;
    const report = { config: { ...flags, databaseUrls: withoutPasswords(databaseUrls) }, result, outcome };
    await writeFile(config.jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nJSON report: ${config.jsonFile}`);
  }
  if (config.markdownFile) {
    await writeFile(config.markdownFile, `${formatMarkdown(result, outcome)}\n`);
    console.log(`Markdown report: ${config.markdownFile}`);
  }
}

/** A report file is shared and kept: database URLs go into it without their passwords. */
function withoutPasswords(urls: CliConfig['databaseUrls']): CliConfig['databaseUrls'] {
  const redact = (text: string) => {
    const url = new URL(text);
    if (url.password) url.password = 'redacted';
    return url.toString();
  };
  return { orders: redact(urls.orders), inventory: redact(urls.inventory), billing: redact(urls.billing) };
}

/** Undefined when the orders API answers at all (even unhealthy), else why it did not. */
async function probe(url: string): Promise<string | undefined> {
  try {
    const response = await getText(new URL('/healthz', url), 3_000);
    if (response.status !== 200) {
      console.error(
        `load: warning: ${url}/healthz answered ${response.status}: ${response.body.slice(0, 200)}`,
      );
    }
    return undefined;
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    return code ?? message;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2), process.env);
} catch (err) {
  // Unexpected (a database that cannot be reached, say): one readable line, not a stack trace.
  const { code, message } = err as { code?: string; message?: string };
  console.error(`load: ${message ?? String(err)}${code ? ` (${code})` : ''}`);
  process.exitCode = 1;
}
