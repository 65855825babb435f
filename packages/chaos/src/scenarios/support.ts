import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import type { ScenarioContext } from '../scenario.ts';

/** The scenario's own broker; only scenarios that declare `needs.ownBroker` may break one. */
export function ownBroker(context: ScenarioContext): KafkaBroker {
  if (!context.broker) throw new Error('this scenario breaks the broker: declare needs.ownBroker');
  return context.broker;
}
