import { formatDuration } from './duration.ts';
import type { LoadProgress } from './runLoad.ts';

const BAR_WIDTH = 24;

/** How far the run is, 0..1, by count or by duration, whichever is further; undefined if unbounded. */
export function completion(progress: LoadProgress): number | undefined {
  const parts = [
    progress.count ? progress.sent / progress.count : undefined,
    progress.durationMs ? progress.elapsedMs / progress.durationMs : undefined,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : Math.min(1, Math.max(...parts));
}

/** One line: `[██████░░░░]  42%  sent 420  accepted 400  shed 0  rejected 20  in flight 3  retries 0  49.8/s  8.4 s`. */
export function progressLine(progress: LoadProgress, withBar: boolean): string {
  const done = completion(progress);
  const filled = Math.round((done ?? 0) * BAR_WIDTH);
  const bar =
    withBar && done !== undefined ? `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ` : '';
  const percent = done === undefined ? '' : `${String(Math.floor(done * 100)).padStart(3)}%  `;
  return (
    `${bar}${percent}sent ${progress.sent}  accepted ${progress.accepted}  shed ${progress.shed}  ` +
    `rejected ${progress.rejected}  ` +
    `in flight ${progress.inFlight}  retries ${progress.retries}  ${progress.rate.toFixed(1)}/s  ` +
    formatDuration(progress.elapsedMs)
  );
}

/**
 * Shows the latest progress: on a terminal, one line redrawn in place a few times a second; in a
 * log or pipe, a plain line every few seconds (a redrawn line would be a wall of carriage returns).
 */
export function startProgressDisplay(stream: NodeJS.WriteStream) {
  const tty = stream.isTTY === true;
  let latest: LoadProgress | undefined;
  let printed: LoadProgress | undefined;
  const draw = () => {
    if (!latest || latest === printed) return;
    printed = latest;
    stream.write(
      tty ? `\r\x1b[2K${progressLine(latest, true)}` : `progress: ${progressLine(latest, false)}\n`,
    );
  };
  const timer = setInterval(draw, tty ? 200 : 5_000);
  return {
    update(progress: LoadProgress) {
      latest = progress;
    },
    /** Draw the final state and leave the cursor on a fresh line. */
    stop() {
      clearInterval(timer);
      draw();
      if (tty) stream.write('\n');
    },
  };
}
