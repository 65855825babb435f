/**
 * One topic per aggregate type (`order.events`): every event of one aggregate, whatever its type,
 * lands on one topic and, keyed by aggregate id, on one partition, so consumers see an order's
 * ORDER_CREATED before its ORDER_CANCELLED. A topic per event type could not promise that.
 */
export function topicFor(aggregateType: string, prefix = ''): string {
  return `${prefix}${aggregateType}.events`;
}
