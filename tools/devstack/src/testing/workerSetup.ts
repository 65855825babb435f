// Runs in every test worker before its test file (vitest `setupFiles`). Tests create kafkajs clients
// of their own (topic readers, admin clients), so each worker gets the fix for kafkajs' idle 1 ms
// timer loop the way the apps do (packages/runtime/src/kafka/kafkajs/requestQueueFix.ts).
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';

fixKafkajsIdleTimerLoop();
