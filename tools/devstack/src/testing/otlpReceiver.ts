import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listenOnAnyPort } from '../ports.ts';
import { type ProcessName, RELAYS, SERVICES } from '../stackPlan.ts';

// A minimal OpenTelemetry collector for tests: the services export their spans to it over
// OTLP/HTTP with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), and the test reads them.

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: AnyValue }[];
  links?: { traceId: string; spanId: string }[];
};
type ExportRequest = {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
};
/** A received span, flattened: its service and its attributes as strings. */
export type Span = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer' | 'unspecified';
  attributes: Record<string, string>;
  /** The span's links, by the trace and span they point at. */
  links: { traceId: string; spanId: string }[];
};

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
const text = (value: AnyValue) =>
  String(value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue ?? '');

/** A minimal OTLP/HTTP receiver: `POST /v1/traces` with `application/json` bodies. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const request = JSON.parse(body.toString()) as ExportRequest;
      for (const resourceSpans of request.resourceSpans ?? []) {
        const resource = Object.fromEntries(
          (resourceSpans.resource?.attributes ?? []).map((a) => [a.key, text(a.value)]),
        );
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              service: resource['service.name'] ?? '?',
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: KINDS[span.kind] ?? 'unspecified',
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, text(a.value)])),
              links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await listenOnAnyPort(server);
  return {
    port,
    spans,
    tracingEnv: (service) => ({
      OTEL_SERVICE_NAME: service,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100', // export spans within 100 ms, not the default 5 s
    }),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

export type OtlpReceiver = {
  port: number;
  /** Every span received so far, in arrival order. */
  spans: Span[];
  /** The environment that makes a service export its spans here (see packages/runtime/src/tracing.ts). */
  tracingEnv(service: string): Record<string, string>;
  close(): Promise<void>;
};

/** Tracing on for every process of a stack (startStack's extraEnv). */
export function tracingEnvForStack(
  receiver: OtlpReceiver,
): Partial<Record<ProcessName, Record<string, string>>> {
  return Object.fromEntries([...SERVICES, ...RELAYS].map((name) => [name, receiver.tracingEnv(name)]));
}
