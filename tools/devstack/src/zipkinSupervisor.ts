import { type Supervised, type Supervisor, type SupervisorOptions, superviseJvm } from './supervisor.ts';

/**
 * Keeps the demo's Zipkin running (supervisor.ts): when its JVM exits on its own, it starts it again
 * on the same port, so the services' exporters find it again at their next batch. What it held is
 * gone (the store is in memory); the console says "traces unavailable" while it is down
 * (apps/console/src/traceStore.ts).
 */
export type ZipkinSupervisor = Supervisor;

export function superviseZipkin(server: Supervised, options: SupervisorOptions): ZipkinSupervisor {
  const wording = {
    name: 'Zipkin',
    whileDown: 'the traces it held are lost',
    whenBack: 'new traces are recorded again',
    readyTimeoutMs: 90_000,
  };
  return superviseJvm(server, wording, options);
}
