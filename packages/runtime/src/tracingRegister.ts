/**
 * Entry point for `node --import @outbox/runtime/tracing-register apps/<app>/src/main.ts`.
 *
 * `--import` runs this before the app's module graph is loaded, which is the only moment the
 * loader hooks of the http/express/pg instrumentations can still see those imports. With tracing
 * disabled (the default, see tracingEnabled) it only imports @opentelemetry/api and returns.
 *
 * Each app's main.ts imports this module first as well: a no-op when `--import` already ran it
 * (one module, evaluated once), and when it did not (a start command without the flag) the SDK
 * still starts, so the spans this repository creates itself and the context propagation through
 * the outbox and Kafka still work; only the automatic http/express/pg spans are missing.
 */
import { startTracing } from './tracing.ts';

await startTracing();
