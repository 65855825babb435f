import { findErrorBy } from '@platformatic/kafka';
import { KafkaSendError } from '../acknowledgement.ts';

/**
 * The client's error tree (a failure per broker, each per partition) as one KafkaSendError, so the
 * relay tells an unreachable cluster (no attempt used up) from a refused event as it does with
 * kafkajs. Every call the relay's publish makes goes through it: connect, the admin calls, send.
 */
export function asSendError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const protocol = findErrorBy(err, 'code', 'PLT_KFK_PROTOCOL') as {
    apiId?: string;
    canRetry?: boolean;
  } | null;
  const network = findErrorBy(err, 'code', 'PLT_KFK_NETWORK');
  return new KafkaSendError(err, {
    ...(protocol?.apiId ? { type: protocol.apiId } : {}),
    unavailable: network !== null || protocol?.canRetry === true,
  });
}
