/**
 * How orders gets ORDER_CREATED to Kafka (its WRITE_MODE): `outbox`, the pattern, or one of the two
 * naive dual writes the demo and the chaos suite break on purpose (apps/orders/src/demo/). The
 * orders API, the console's write-mode switch and the chaos scenarios share this one list.
 */
export const WRITE_MODES = ['outbox', 'commit-then-publish', 'publish-then-commit'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];
