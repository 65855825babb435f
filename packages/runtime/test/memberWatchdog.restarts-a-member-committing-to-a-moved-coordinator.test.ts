// kafkajs can leave a member stuck after its coordinator moved back to a broker started again: a
// rejoin answered "the coordinator is loading" is not retried, and from then on the member only
// sees its offset commits refused as "not the correct coordinator", with no join and no heartbeat
// (seen in the coordinator-kill chaos scenario under CPU load). The watchdog restarts such a member
// after 20 s of those refusals, and only then: a join, a heartbeat or a commit that succeeds ends
// the count, and commits that fail because no broker answers never start it.
import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemberWatchdog } from '../src/kafka/kafkajs/memberWatchdog.ts';

const EVENTS = { HEARTBEAT: 'heartbeat', GROUP_JOIN: 'join', END_BATCH_PROCESS: 'end_batch' };

/** The part of a kafkajs consumer the watchdog listens to. */
function fakeConsumer() {
  const emitter = new EventEmitter();
  const consumer = {
    events: EVENTS,
    on: (event: string, listener: () => void) => emitter.on(event, listener),
  };
  return { consumer: consumer as unknown as Consumer, emit: (event: string) => emitter.emit(event) };
}

/** kafkajs's protocol error as its commit rejects with it. */
function protocolError(type: string): Error {
  return Object.assign(new Error(`${type} answered`), { name: 'KafkaJSProtocolError', type });
}
const notTheCoordinator = () => protocolError('NOT_COORDINATOR_FOR_GROUP');
const unreachable = () =>
  Object.assign(new Error('connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });

let watchdog: MemberWatchdog | undefined;
afterEach(() => watchdog?.close());

function watched() {
  let now = 0;
  let restarts = 0;
  watchdog = new MemberWatchdog(
    600_000,
    async () => {
      restarts++;
    },
    pino({ level: 'silent' }),
    () => now,
  );
  const member = fakeConsumer();
  watchdog.watch(member.consumer);
  return {
    watchdog,
    member,
    at: (ms: number) => {
      now = ms;
    },
    restarts: () => restarts,
  };
}

describe('the member watchdog, told how offset commits end', () => {
  it('restarts a member whose commits are refused as "not the coordinator" for 20 s, once', async () => {
    const { watchdog, at, restarts } = watched();
    for (let ms = 0; ms < 20_000; ms += 1_000) {
      at(ms);
      watchdog.refused(notTheCoordinator());
    }
    expect(restarts()).toBe(0);
    at(20_000);
    watchdog.refused(notTheCoordinator());
    at(21_000);
    watchdog.refused(notTheCoordinator()); // while the restart runs: not a second one
    expect(restarts()).toBe(1);
  });

  it('counts again from a join, a heartbeat or a commit that succeeds', () => {
    const { watchdog, member, at, restarts } = watched();
    const refuseFor = (from: number, to: number) => {
      for (let ms = from; ms <= to; ms += 1_000) {
        at(ms);
        watchdog.refused(notTheCoordinator());
      }
    };
    refuseFor(0, 15_000);
    member.emit(EVENTS.GROUP_JOIN);
    refuseFor(16_000, 31_000);
    member.emit(EVENTS.HEARTBEAT);
    refuseFor(32_000, 47_000);
    watchdog.committed();
    refuseFor(48_000, 63_000);
    expect(restarts()).toBe(0);
  });

  it('is not started by a batch processed, nor by commits no broker answered', () => {
    const { watchdog, member, at, restarts } = watched();
    for (let ms = 0; ms <= 60_000; ms += 1_000) {
      at(ms);
      watchdog.refused(unreachable());
      member.emit(EVENTS.END_BATCH_PROCESS);
    }
    expect(restarts()).toBe(0);
    // A batch is no sign that the coordinator took the member back: the count goes on through it.
    for (let ms = 61_000; ms <= 81_000; ms += 1_000) {
      at(ms);
      watchdog.refused(notTheCoordinator());
      member.emit(EVENTS.END_BATCH_PROCESS);
    }
    expect(restarts()).toBe(1);
  });
});
