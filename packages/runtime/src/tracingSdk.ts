import { basename, dirname } from 'node:path';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { register as registerLoaderHooks, supportsSyncHooks } from 'import-in-the-middle/register-hooks.mjs';

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (exporter, endpoint,
 * protocol, sampler, batch delays, resource attributes, propagators). Loaded only when tracing is
 * enabled (see tracing.ts), so a process without tracing never pays for it.
 */

/** Packages whose ESM imports are wrapped so the instrumentations can patch them. */
const INSTRUMENTED_MODULES = ['http', 'https', 'express', 'pg'];

/** Ops endpoints polled by tests, Compose and Prometheus: not worth a trace each. */
const UNTRACED_PATHS = new Set(['/healthz', '/metrics']);

export function startSdk(): { shutdown(): Promise<void> } {
  // The apps are ES modules: `import pg from 'pg'` is not a require() that require-in-the-middle
  // can see, so import-in-the-middle's loader hook wraps these modules for the instrumentations.
  // In-thread (module.registerHooks) hooks on Node >= 24.11.1; only the modules listed are
  // intercepted, so the apps' own .ts files load exactly as without tracing.
  if (supportsSyncHooks()) registerLoaderHooks({ include: INSTRUMENTED_MODULES });

  process.env.OTEL_SERVICE_NAME ??= serviceNameFromEntryPoint();
  const sdk = new NodeSDK({
    // Traces only: metrics are Prometheus's (GET /metrics), logs are pino's on stdout, unless
    // the environment asks for OTLP metrics or logs explicitly.
    ...(process.env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(process.env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
        // Outgoing calls are traced only inside a trace (no root spans for background chatter).
        requireParentforOutgoingSpans: true,
      }),
      new ExpressInstrumentation(),
      // Only queries made inside a trace: the relay's claim polling and the consumers' bookkeeping
      // outside an event would otherwise start a new trace every half second.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return sdk;
}

/** `apps/orders/src/main.ts` → `orders`, when OTEL_SERVICE_NAME is not set. */
function serviceNameFromEntryPoint(): string {
  const entry = process.argv[1];
  return entry ? basename(dirname(dirname(entry))) : 'outbox-service';
}
