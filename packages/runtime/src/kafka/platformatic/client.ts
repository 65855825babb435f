import type { KafkaClient } from '../ports.ts';
import { PlatformaticAdmin } from './admin.ts';
import { platformaticGroupMember } from './consumer.ts';
import type { PlatformaticOptions } from './options.ts';
import { PlatformaticProducer } from './producer.ts';

/** The @platformatic/kafka client as the project's KafkaClient: its acknowledged producer, admin calls and group member. */
export function platformaticClient(options: PlatformaticOptions): KafkaClient {
  return {
    name: 'platformatic',
    producer: (producerOptions) => new PlatformaticProducer(options, producerOptions),
    admin: () => new PlatformaticAdmin(options),
    groupMember: (member) => platformaticGroupMember(options, member),
  };
}
