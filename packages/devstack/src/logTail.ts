import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

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
