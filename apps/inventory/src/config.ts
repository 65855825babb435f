import { consumerFaultSettings, consumerFaultSwitches } from '@outbox/inbox';
import {
  allowFaults,
  consumerServiceSchema,
  refineKafkaGroupProtocol,
  refuseFaultsUnlessAllowed,
} from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import type { z } from 'zod';

// The chaos suite's kill switches are refused unless OUTBOX_ALLOW_FAULTS allows them; main.ts
// hands them to the consumer as hooks (consumerFaults in @outbox/inbox).
export const configSchema = refuseFaultsUnlessAllowed(
  refineKafkaGroupProtocol(
    refineKafkaSecurity(
      refineDatabaseTimeouts(
        consumerServiceSchema({ port: 3003, groupId: 'inventory' }).extend({
          ...databaseTimeoutSettings,
          ...allowFaults,
          ...consumerFaultSettings,
        }),
      ),
    ),
  ),
  consumerFaultSwitches,
);

export type Config = z.output<typeof configSchema>;
