import { describe, expect, it } from 'vitest';
import { isWellFormedTraceparent, parseTraceparent } from '../src/traceparent.ts';

// writeEvent stores a traceparent only if it is well formed, and every reader (the relay's and the
// consumers' spans, the console, the exemplars) trusts one only if it is: the same rule for both,
// so a row can never hold a traceparent its readers then ignore, nor a reader follow one a writer
// would have refused.
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('one traceparent rule', () => {
  it('takes version 00 with non-zero ids, sampled or not', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, sampled: false });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)).toEqual({ traceId: TRACE, sampled: true });
    expect(isWellFormedTraceparent(`00-${TRACE}-${SPAN}-01`)).toBe(true);
  });

  it.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['another version', `01-${TRACE}-${SPAN}-01`],
    ['the invalid version ff', `ff-${TRACE}-${SPAN}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a trailing field', `00-${TRACE}-${SPAN}-01-extra`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['an oversized value', `00-${TRACE}-${SPAN}-01${' '.repeat(4096)}`],
    ['nothing', undefined],
  ])('refuses %s, when stored and when read alike', (_what, value) => {
    expect(isWellFormedTraceparent(value)).toBe(false);
    expect(parseTraceparent(value)).toBeUndefined();
  });
});
