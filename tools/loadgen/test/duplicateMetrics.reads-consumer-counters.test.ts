import { describe, expect, it } from 'vitest';
import { difference, duplicatesIn } from '../src/duplicateMetrics.ts';

// As prom-client exposes consumer_events_total (packages/inbox/src/consumerMetrics.ts).
const exposition = `# HELP consumer_events_total Events handled, by result: applied, duplicate (already applied, skipped), ignored (not for us).
# TYPE consumer_events_total counter
consumer_events_total{consumer="inventory",event_type="ORDER_CREATED",result="applied",service="inventory"} 40
consumer_events_total{consumer="inventory",event_type="ORDER_CREATED",result="duplicate",service="inventory"} 3
consumer_events_total{consumer="inventory",event_type="ORDER_CANCELLED",result="duplicate",service="inventory"} 2
consumer_events_total{consumer="inventory",event_type="ORDER_CONFIRMED",result="ignored",service="inventory"} 30
consumer_events_total_created{consumer="inventory",event_type="ORDER_CREATED",result="duplicate"} 1700000000
consumer_lag_messages{consumer="inventory",topic="order.events",partition="0",service="inventory"} 0
`;

describe('duplicates from /metrics', () => {
  it('sums result="duplicate" per consumer and ignores every other series', () => {
    expect(duplicatesIn(exposition)).toEqual({ inventory: 5 });
    expect(duplicatesIn('')).toEqual({});
  });

  it('reads OpenMetrics too: float values, an exemplar after the value, a } inside a label value', () => {
    const openMetrics = [
      '# TYPE consumer_events counter',
      'consumer_events_total{consumer="billing",event_type="ORDER_CREATED",result="duplicate"} 2.0 # {trace_id="4bf92f3577b34da6"} 1.0 1700000000.000',
      'consumer_events_total{consumer="odd}name",event_type="ORDER_CREATED",result="duplicate"} 1.0',
      'consumer_events_created{consumer="billing",event_type="ORDER_CREATED",result="duplicate"} 1700000000.0',
      '# EOF',
    ].join('\n');
    expect(duplicatesIn(openMetrics)).toEqual({ billing: 2, 'odd}name': 1 });
  });

  it("counts the run's own duplicates: after minus before; a restarted process counts from 0", () => {
    expect(difference({ inventory: 5, billing: 1 }, { inventory: 2 })).toEqual({ inventory: 3, billing: 1 });
    expect(difference({ inventory: 1 }, { inventory: 4 })).toEqual({ inventory: 1 });
  });
});
