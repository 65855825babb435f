import { consumerServiceSchema } from '@outbox/service/config';
import type { z } from 'zod';

export const configSchema = consumerServiceSchema({ port: 3004, groupId: 'billing' });

export type Config = z.output<typeof configSchema>;
