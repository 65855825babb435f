export { createKafka, type KafkaClientOptions } from './client.ts';
export { ensureTopics } from './ensureTopics.ts';
export { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';
