import { type Context, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { type Sampler, SamplingDecision } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import {
  DEFAULT_TRACES_PER_SECOND,
  rateLimitedSampler,
  samplerFor,
  samplingConfigSchema,
  TRACES_PER_SECOND_VARIABLE,
} from '../src/traceSampler.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A clock the test moves by hand, in milliseconds. */
function manualClock() {
  let ms = 1_000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

function parent(flags: TraceFlags, isRemote: boolean): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: TRACE_ID,
    spanId: '00f067aa0ba902b7',
    traceFlags: flags,
    isRemote,
  });
}

const decide = (sampler: Sampler, context: Context = ROOT_CONTEXT) =>
  sampler.shouldSample(context, TRACE_ID, 'POST /orders', SpanKind.SERVER, {}, []).decision;

/** How many of `count` new traces, started at the same instant, are sampled. */
const sampledOf = (sampler: Sampler, count: number) =>
  Array.from({ length: count }, () => decide(sampler)).filter(
    (decision) => decision === SamplingDecision.RECORD_AND_SAMPLED,
  ).length;

describe('rateLimitedSampler: new traces', () => {
  it('samples a burst of N at once, then nothing until time refills the bucket', () => {
    const clock = manualClock();
    const sampler = rateLimitedSampler(5, clock.now);
    expect(sampledOf(sampler, 8)).toBe(5);
    expect(decide(sampler)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('refills continuously at N a second, never beyond the burst of N', () => {
    const clock = manualClock();
    const sampler = rateLimitedSampler(10, clock.now);
    expect(sampledOf(sampler, 10)).toBe(10);
    clock.advance(99); // 0.99 of a token
    expect(decide(sampler)).toBe(SamplingDecision.NOT_RECORD);
    clock.advance(1);
    expect(decide(sampler)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    clock.advance(350);
    expect(sampledOf(sampler, 10)).toBe(3);
    clock.advance(60_000); // an idle minute fills the bucket, and no more
    expect(sampledOf(sampler, 100)).toBe(10);
  });

  it('holds at most N a second under a steady flood', () => {
    const clock = manualClock();
    const sampler = rateLimitedSampler(20, clock.now);
    let sampled = sampledOf(sampler, 20);
    for (let ms = 0; ms < 10_000; ms++) {
      clock.advance(1);
      sampled += sampledOf(sampler, 1); // 1,000 new traces a second
    }
    expect(sampled).toBe(20 + 20 * 10);
  });

  it('under one a second, still lets one through now and then', () => {
    const clock = manualClock();
    const sampler = rateLimitedSampler(0.5, clock.now);
    expect(sampledOf(sampler, 3)).toBe(1);
    clock.advance(1_999);
    expect(decide(sampler)).toBe(SamplingDecision.NOT_RECORD);
    clock.advance(1);
    expect(decide(sampler)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });
});

describe('rateLimitedSampler: spans with a parent follow its sampled flag', () => {
  for (const isRemote of [true, false]) {
    const where = isRemote ? 'remote (a traceparent header)' : 'local';
    it(`a sampled ${where} parent: sampled, even with the bucket empty`, () => {
      const sampler = rateLimitedSampler(1, manualClock().now);
      expect(sampledOf(sampler, 1)).toBe(1);
      expect(decide(sampler, parent(TraceFlags.SAMPLED, isRemote))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    });

    it(`an unsampled ${where} parent: not recorded, even with the bucket full`, () => {
      const sampler = rateLimitedSampler(1, manualClock().now);
      expect(decide(sampler, parent(TraceFlags.NONE, isRemote))).toBe(SamplingDecision.NOT_RECORD);
      // ...and it took no token: the next new trace is still sampled.
      expect(decide(sampler)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    });
  }
});

describe(`${TRACES_PER_SECOND_VARIABLE} and OTEL_TRACES_SAMPLER`, () => {
  const config = (env: Record<string, string>) => loadConfig('tracing', samplingConfigSchema, env);

  it(`defaults to ${DEFAULT_TRACES_PER_SECOND} a second`, () => {
    expect(config({})[TRACES_PER_SECOND_VARIABLE]).toBe(DEFAULT_TRACES_PER_SECOND);
    expect(config({ [TRACES_PER_SECOND_VARIABLE]: '0.5' })[TRACES_PER_SECOND_VARIABLE]).toBe(0.5);
  });

  it('leaves the SDK its standard samplers when OTEL_TRACES_SAMPLER is set', () => {
    expect(samplerFor(config({ OTEL_TRACES_SAMPLER: 'always_on' }))).toBeUndefined();
    expect(samplerFor(config({}))?.toString()).toContain('RateLimitedRootSampler{20/s}');
  });

  for (const bad of ['0', '-3', 'twenty', '', 'Infinity']) {
    it(`refuses ${TRACES_PER_SECOND_VARIABLE}=${JSON.stringify(bad)}, naming the variable`, () => {
      expect(() => config({ [TRACES_PER_SECOND_VARIABLE]: bad })).toThrow(ConfigError);
      expect(() => config({ [TRACES_PER_SECOND_VARIABLE]: bad })).toThrow(
        new RegExp(`${TRACES_PER_SECOND_VARIABLE}: expected a positive number`),
      );
    });
  }
});
