import { join } from 'node:path';
import { ensureZipkinJar } from './jars.ts';
import { JvmServer, jvmHeapOptions, probeHttp } from './jvmServer.ts';
import { localDir } from './paths.ts';

/**
 * The heap one span of this system takes in Zipkin's in-memory store, indexes included: 3.5 KB
 * measured by `npm run bench:zipkin-span-weight` (bench/results/zipkin-span-weight/zipkin-span-weight.md), rounded up
 * to 4 KiB. A span is not its JSON (about 0.9 KB): Java strings, maps and the store's indexes.
 */
const SPAN_HEAP_BYTES = 4096;

/**
 * The share of the heap the stored spans may fill. The rest is Zipkin itself (about 30 MiB after
 * a GC), the requests being decoded under load, and the room G1 needs to collect without a full GC.
 */
const STORE_SHARE = 0.5;

/** The span bound that keeps the store within its share of a `heapMb` heap (65,536 for 512 MiB). */
function spanBoundFor(heapMb: number): number {
  return Math.floor((heapMb * 2 ** 20 * STORE_SHARE) / SPAN_HEAP_BYTES);
}

type ZipkinServerOptions = {
  /** Names the folder of the pid file and the log, `.local/zipkin/<name>`. Default 'demo'. */
  name?: string;
  /** HTTP port of the API and the UI on 127.0.0.1. Default 9411, Zipkin's own. */
  port?: number;
  /** Max heap. Default 512 MiB; the span bound follows from it (spanBoundFor). */
  heapMb?: number;
  /**
   * Spans the in-memory store keeps before it drops the oldest traces. Default spanBoundFor(heapMb):
   * at 11 spans an order, the newest ~6,000 orders with the default heap (docs/tracing.md).
   */
  maxSpans?: number;
};

/**
 * A real Zipkin server (API, UI and in-memory storage in one jar from Maven Central) for the local
 * demo and the tests, in place of the Jaeger of docker compose. Spans arrive on
 * `POST /api/v2/spans` (OpenTelemetry's Zipkin exporter, `tracingEnv`), traces are read on
 * `GET /api/v2/trace/<id>` and shown at `/zipkin/traces/<id>`.
 *
 * A detached JVM with a pid file like the Kafka broker (JvmServer); a Zipkin left running by a demo
 * killed without its Ctrl-C handler is stopped at the next start (its traces are in memory anyway).
 */
export class ZipkinServer extends JvmServer {
  protected readonly what = 'Zipkin';
  protected readonly pidName = 'zipkin.pid';
  protected override readonly replacesRunning = true;
  protected override readonly stopTimeoutMs = 10_000;
  readonly port: number;
  readonly dir: string;
  readonly logFile: string;
  readonly heapMb: number;
  readonly maxSpans: number;

  constructor(options: ZipkinServerOptions = {}) {
    super();
    this.port = options.port ?? 9411;
    this.dir = join(localDir, 'zipkin', options.name ?? 'demo');
    this.logFile = join(this.dir, 'zipkin.log');
    this.heapMb = options.heapMb ?? 512;
    this.maxSpans = options.maxSpans ?? spanBoundFor(this.heapMb);
    this.env = { ...process.env, STORAGE_TYPE: 'mem', MEM_MAX_SPANS: String(this.maxSpans) };
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  protected get address(): string {
    return this.url;
  }

  /** Where the Zipkin UI shows one trace; `{traceId}` is replaced by the console. */
  get traceUrlTemplate(): string {
    return `${this.url}/zipkin/traces/{traceId}`;
  }

  /**
   * The environment that makes one process of the system export its spans here: OpenTelemetry's
   * own variables, read by the SDK (packages/runtime/src/tracing.ts turns tracing on for them).
   */
  tracingEnv(service: string): Record<string, string> {
    return {
      OTEL_SERVICE_NAME: service,
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${this.url}/api/v2/spans`,
      // Spans reach Zipkin within half a second, rather than the SDK's default 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '500',
    };
  }

  protected commandLineHolds(): string[] {
    return ['zipkin-server', `=${this.port}`];
  }

  protected ports(): [number, string][] {
    return [[this.port, 'ZIPKIN_PORT=...']];
  }

  /** Zipkin answers `GET /health`. */
  protected probe(timeoutMs: number): Promise<void> {
    return probeHttp(`${this.url}/health`, timeoutMs);
  }

  /** Downloads the jar the first time. */
  protected async prepare(): Promise<string[]> {
    return [
      ...jvmHeapOptions(64, this.heapMb),
      '-jar',
      await ensureZipkinJar(),
      // Armeria (Zipkin's HTTP server) on loopback only, like every process of the demo.
      `--armeria.ports[0].port=${this.port}`,
      '--armeria.ports[0].ip=127.0.0.1',
      '--armeria.ports[0].protocols[0]=http',
      '--spring.main.banner-mode=off',
    ];
  }
}
