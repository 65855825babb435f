import type { OrderTimeline, TimelineEvent, TimelineStep } from '../shared/timeline.ts';
import { byId, h, shortId } from './dom.ts';

/** "0.4 ms", "12 ms", "1.25 s": sub-millisecond hops are common and worth seeing as such. */
export function formatDelay(ms: number): string {
  if (ms < 1) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

function label(step: TimelineStep): string {
  if (step.kind === 'claimed') return `claimed by ${step.actor}`;
  if (step.kind === 'applied') return `${step.actor} applied`;
  return step.kind;
}

/** The time of day to the millisecond: hops are milliseconds apart. */
function clock(iso: string): string {
  return iso.slice(11, 23);
}

/** A reply's commit is the transaction that applied its cause: say so rather than "0.0 ms". */
function delayText(step: TimelineStep): string {
  const delay = step.delayMs ?? 0;
  return step.kind === 'committed' && delay < 1 ? 'in the same transaction' : formatDelay(delay);
}

function stepItem(step: TimelineStep, slowest: boolean): HTMLElement {
  const pending = step.at === null;
  return h(
    'li',
    {
      class: `hop${pending ? ' pending' : ''}${slowest ? ' slowest' : ''}`,
      'data-step': step.kind,
      'data-actor': step.actor,
      ...(slowest ? { 'data-slowest': true } : {}),
      title: step.at ? `${step.at} (from the ${step.source})` : (step.note ?? ''),
    },
    h(
      'div',
      {},
      h('span', { class: 'hop-name' }, label(step)),
      step.delayMs !== null
        ? h('span', { class: 'hop-delay', 'data-field': 'delay' }, delayText(step))
        : null,
      slowest ? h('span', { class: 'badge failed' }, 'slowest') : null,
      step.at
        ? h('div', { class: 'muted' }, clock(step.at), step.source === 'trace' ? ' (trace)' : '')
        : null,
      step.span
        ? h(
            'div',
            { class: 'hop-span' },
            `${step.span.name} `,
            h('span', {}, formatDelay(step.span.durationMs)),
          )
        : null,
      pending && step.note ? h('div', { class: 'hop-note' }, step.note) : null,
    ),
  );
}

function eventRow(event: TimelineEvent, timeline: OrderTimeline): HTMLElement {
  const cause = timeline.events.find((other) => other.eventId === event.causedBy);
  return h(
    'li',
    { class: 'timeline-event', 'data-event-type': event.eventType, 'data-event-id': event.eventId },
    h(
      'div',
      {},
      h('code', {}, event.eventType),
      h(
        'span',
        { class: 'muted' },
        ` in the ${event.outbox} outbox`,
        cause ? `, written applying ${cause.eventType}` : '',
      ),
      event.appliedBy.length === 0 ? h('span', { class: 'muted' }, ' · no service acts on it') : null,
    ),
    h(
      'ol',
      { class: 'hops' },
      ...event.steps.map((step, index) =>
        stepItem(step, timeline.slowest?.eventId === event.eventId && timeline.slowest.step === index),
      ),
    ),
  );
}

/** What each hop is, for someone meeting the pattern for the first time. */
function explanation(): HTMLElement {
  return h(
    'p',
    { class: 'explain' },
    h('strong', {}, 'committed'),
    ': the event is written to its service’s outbox in the same transaction as the change. ',
    h('strong', {}, 'claimed'),
    ': a relay takes it (FOR UPDATE SKIP LOCKED) with a lease; the outbox forgets when, the trace knows. ',
    h('strong', {}, 'published'),
    ': Kafka acknowledged it and the relay marked the row. ',
    h('strong', {}, 'applied'),
    ': a consumer recorded it in processed_events with its effect and any reply, in one transaction. ',
    'Each delay is the time since the hop before it; the slowest is outlined.',
  );
}

export function renderTimeline(timeline: OrderTimeline | { error: string; orderId: string }): void {
  const box = byId('order-timeline');
  box.hidden = false;
  box.dataset.orderId = timeline.orderId;
  const heading = h('h3', {}, `Where the time went: order ${shortId(timeline.orderId)}`);
  if ('error' in timeline) {
    box.replaceChildren(heading, h('p', { class: 'bad' }, timeline.error));
    return;
  }
  const decision = timeline.decision
    ? `${timeline.status}: ${timeline.decision.eventType} committed ${formatDelay(timeline.decision.afterMs)} after ORDER_CREATED.`
    : `${timeline.status}: no decision yet.`;
  const traceLink = timeline.traceUrl
    ? h(
        'a',
        { href: timeline.traceUrl, target: '_blank', rel: 'noopener', 'data-field': 'trace-link' },
        'Open the full trace',
      )
    : null;
  const trace = timeline.trace.available
    ? h(
        'p',
        { 'data-field': 'trace' },
        `Claim times and spans from the order's trace (${timeline.trace.spans} spans). `,
        traceLink,
      )
    : timeline.trace.sampledOut
      ? h(
          'p',
          { class: 'muted', 'data-field': 'trace', 'data-sampled-out': true },
          `Not traced: ${timeline.trace.reason}`,
        )
      : h(
          'p',
          { class: 'muted', 'data-field': 'trace' },
          `Trace unavailable: ${timeline.trace.reason} `,
          traceLink,
        );
  box.replaceChildren(
    heading,
    explanation(),
    trace,
    timeline.events.length
      ? h('ol', { class: 'timeline' }, ...timeline.events.map((event) => eventRow(event, timeline)))
      : h(
          'p',
          { class: 'muted' },
          'None of its events is left in the outboxes: published rows are deleted after RELAY_RETENTION_HOURS.',
        ),
    h('p', { 'data-field': 'decision' }, h('strong', {}, 'Final state '), decision),
  );
}
