import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { envDetector, resourceFromAttributes, serviceInstanceIdDetector } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { register as registerLoaderHooks, supportsSyncHooks } from 'import-in-the-middle/register-hooks.mjs';
import { loadConfigOrExit, trustIncomingTraceparent } from './config.ts';
import { linkCallerContext, setCallerContextAside } from './incomingTraceContext.ts';
import { samplerFor, samplingConfigSchema } from './traceSampler.ts';
import { startsNoSpan } from './tracing.ts';

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (exporter, endpoint,
 * protocol, sampler, batch sizes and delays, resource attributes, propagators). Loaded only when
 * tracing is enabled (see tracing.ts), so a process without tracing never pays for it. Unless
 * OTEL_TRACES_SAMPLER names one of the SDK's samplers, new traces are rate-limited (traceSampler.ts).
 *
 * What it traces is cut to what one order's trace needs (docs/tracing.md, "What is traced, what
 * was cut"): the HTTP request span, and the publish and process spans this repository makes
 * itself. No pg or Express middleware spans, and a resource of three attributes, since Zipkin's
 * exporter repeats the resource in every span.
 */

/** Packages whose ESM imports are wrapped so the instrumentations can patch them. */
const INSTRUMENTED_MODULES = ['http', 'https', 'express'];

/**
 * Only requests that change something start a trace: reads — the ops endpoints Prometheus and the
 * tests poll, the console's GET /orders every second — would fill the trace store with traces
 * nobody follows, and cost the idle demo more CPU than its services (docs/performance.md, "The
 * console open").
 */
const isRead = (req: { method?: string }) => req.method === 'GET' || req.method === 'HEAD';

/**
 * Which requests start no span (reads, and those the app says: tracing.ts's untraceRequests); the
 * others' caller context is set aside unless trusted.
 */
function ignoreIncoming(trustCaller: boolean) {
  return (req: IncomingMessage) => {
    if (isRead(req) || startsNoSpan(req)) return true;
    if (!trustCaller) setCallerContextAside(req);
    return false;
  };
}

export function startSdk(): { shutdown(): Promise<void> } {
  // The apps are ES modules: `import express from 'express'` is not a require() that
  // require-in-the-middle can see, so import-in-the-middle's loader hook wraps these modules for
  // the instrumentations. In-thread (module.registerHooks) hooks on Node >= 24.11.1; only the
  // modules listed are intercepted, so the apps' own .ts files load exactly as without tracing.
  if (supportsSyncHooks()) registerLoaderHooks({ include: INSTRUMENTED_MODULES });

  process.env.OTEL_SERVICE_NAME ??= serviceNameFromEntryPoint();
  const config = loadConfigOrExit(
    process.env.OTEL_SERVICE_NAME,
    samplingConfigSchema.extend(trustIncomingTraceparent),
  );
  const sampler = samplerFor(config);
  const sdk = new NodeSDK({
    // Given a sampler, the SDK ignores OTEL_TRACES_SAMPLER: samplerFor gives none when it is set.
    ...(sampler ? { sampler } : {}),
    // Traces only: metrics are Prometheus's (GET /metrics), logs are pino's on stdout, unless
    // the environment asks for OTLP metrics or logs explicitly.
    ...(process.env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(process.env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    // Which service, which version, which process: nothing else. The SDK's default detectors add
    // the host, the OS and the process (its command line, its path, ...), over 1 KB that Zipkin's
    // exporter copies into every span. OTEL_RESOURCE_ATTRIBUTES still adds what an operator asks
    // for, and OTEL_NODE_RESOURCE_DETECTORS brings the SDK's detectors back.
    resource: resourceFromAttributes({
      'service.name': process.env.OTEL_SERVICE_NAME,
      'service.version': serviceVersionFromEntryPoint(),
    }),
    ...(process.env.OTEL_NODE_RESOURCE_DETECTORS
      ? {}
      : { resourceDetectors: [serviceInstanceIdDetector, envDetector] }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: ignoreIncoming(config.TRACING_TRUST_INCOMING_TRACEPARENT),
        requestHook: linkCallerContext,
        // Outgoing calls are traced only inside a trace (no root spans for background chatter).
        requireParentforOutgoingSpans: true,
      }),
      // Only for the route: it names the request span `POST /orders` (http.route) instead of
      // `POST`. Its spans per middleware, router and handler say nothing the request span does not.
      new ExpressInstrumentation({
        ignoreLayersType: [
          ExpressLayerType.MIDDLEWARE,
          ExpressLayerType.ROUTER,
          ExpressLayerType.REQUEST_HANDLER,
        ],
      }),
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

/** The `version` of the app's package.json (`apps/orders/src/main.ts` → `apps/orders/package.json`). */
function serviceVersionFromEntryPoint(): string {
  const entry = process.argv[1];
  try {
    if (!entry) return 'unknown';
    const manifest = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')) as {
      version?: string;
    };
    return manifest.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
