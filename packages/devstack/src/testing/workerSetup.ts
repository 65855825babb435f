// Runs in every test worker before its test file (vitest `setupFiles`). Tests create kafkajs clients
// of their own (topic readers, admin clients), so each worker hides kafkajs' harmless negative-timeout
// warning the way the apps do (packages/events/src/kafka/nodeWarnings.ts), keeping the output readable.
import { hideKafkajsTimeoutWarning } from '@outbox/events';

hideKafkajsTimeoutWarning();
