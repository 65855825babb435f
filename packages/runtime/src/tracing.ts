import type { IncomingMessage } from 'node:http';
import { trace } from '@opentelemetry/api';

/**
 * Tracing on/off, the shared tracer and the SDK's lifecycle. This module is cheap to import (only
 * `@opentelemetry/api`): the SDK, the exporter and the instrumentations are loaded by
 * tracingSdk.ts, and only when tracing is on. Off, every span below is the API's no-op span.
 *
 * See docs/tracing.md.
 */

/**
 * Whether this process exports traces. Off unless the environment asks for it with the standard
 * variables: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`),
 * an exporter (`OTEL_TRACES_EXPORTER`, other than `none`), or `OTEL_SDK_DISABLED=false`.
 * `OTEL_SDK_DISABLED=true` wins over everything. So tests and the demo run without tracing unless
 * they set one of these.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase();
  if (disabled === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporters === 'none') return false;
  return Boolean(
    exporters ||
      env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ||
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ||
      disabled === 'false',
  );
}

/** The tracer of this repository's own spans (relay publish, consumer process). */
export const tracer = trace.getTracer('@outbox/runtime');

/** Says whether a request, as it arrives, is one the app answers without a span. */
export type UntracedRequests = (request: IncomingMessage) => boolean;

let untraced: UntracedRequests | undefined;

/**
 * Requests that start no span, besides the reads (tracingSdk.ts): the app knows which of its
 * answers are not worth a trace, such as the orders API's refusals under overload, where a span
 * for every refused request would take CPU from the orders being served. Asked as each request
 * arrives, before the HTTP instrumentation starts its span; one filter per process, the last set.
 */
export function untraceRequests(filter: UntracedRequests): void {
  untraced = filter;
}

/** Whether the app said `request` starts no span (untraceRequests). */
export function startsNoSpan(request: IncomingMessage): boolean {
  return untraced?.(request) ?? false;
}

type Sdk = { shutdown(): Promise<void> };
let sdk: Promise<Sdk | undefined> | undefined;

/**
 * Start the OpenTelemetry SDK if tracing is enabled; idempotent. To instrument http, express and
 * pg, it must run before the app imports them: start the process with
 * `node --import @outbox/runtime/tracing-register <main.ts>` (see tracingRegister.ts).
 */
export function startTracing(): Promise<Sdk | undefined> {
  sdk ??= tracingEnabled()
    ? import('./tracingSdk.ts').then(({ startSdk }) => startSdk())
    : Promise.resolve(undefined);
  return sdk;
}

/** Flush the spans still buffered and stop exporting; call it last on shutdown. */
export async function shutdownTracing(): Promise<void> {
  const started = await sdk;
  await started?.shutdown().catch(() => {});
}
