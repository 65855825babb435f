// kafkajs as the lab uses it: tests, benches and tools that drive a kafkajs client of their own
// (an independent observer of the topics) build it as the services do. Production code goes
// through the ports ('@outbox/runtime/kafka') instead.
export { KafkajsAdmin } from './admin.ts';
export { createKafka, kafkajsClient } from './client.ts';
export { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';
