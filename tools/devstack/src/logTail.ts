import { closeSync, fstatSync, openSync, readSync, watch } from 'node:fs';

/**
 * The last `lines` lines of a (possibly large, long-running) log file, reading only its end.
 * Returns '' when the file does not exist yet.
 */
export function tailFile(path: string, lines: number, maxBytes = 256 * 1024): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    closeSync(fd);
  }
}

/**
 * Hands each complete line appended to `path` after byte `fromOffset` to `onLine`, until `stop`,
 * which reads what is left up to the file's current end. The writer
 * never waits for the reader: a slow reader only falls behind in the file. That is how the demo
 * prints the services' logs without sitting on their critical path (a pipe would block a service's
 * synchronous log writes while the demo is busy). Woken by inotify (fs.watch), it reads at most
 * every `intervalMs`, so a burst of lines costs one read, not one per line.
 */
export function followFile(
  path: string,
  fromOffset: number,
  onLine: (line: string) => void,
  intervalMs = 100,
): { stop(): Promise<void> } {
  const fd = openSync(path, 'r');
  const buffer = Buffer.alloc(256 * 1024);
  let offset = fromOffset;
  let partial = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const readToEnd = () => {
    while (true) {
      const bytesRead = readSync(fd, buffer, 0, buffer.length, offset);
      if (bytesRead === 0) return;
      offset += bytesRead;
      const lines = (partial + buffer.toString('utf8', 0, bytesRead)).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    }
  };
  const schedule = () => {
    if (timer || stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      readToEnd();
    }, intervalMs);
  };
  const watcher = watch(path, { persistent: false }, schedule);
  schedule();
  return {
    stop: async () => {
      stopped = true;
      watcher.close();
      clearTimeout(timer);
      readToEnd();
      if (partial) onLine(partial);
      partial = '';
      closeSync(fd);
    },
  };
}
