// The demo's terminal: every service's JSON log lines as one readable, coloured line each.
//
// Output that outlives its reader. `./dev demo | head -5` closes the pipe after five lines; a
// write then fails with EPIPE, which would crash the demo and leave the broker, PostgreSQL and the
// services (each in its own process group) running. Instead the demo goes on silently, and
// Ctrl-C still stops everything it started.
import { styleText } from 'node:util';

const colors = {
  orders: 'cyan',
  'relay-orders': 'magenta',
  inventory: 'green',
  'relay-inventory': 'magenta',
  billing: 'yellow',
  'relay-billing': 'magenta',
  console: 'blue',
  prometheus: 'gray',
  zipkin: 'gray',
  postgres: 'gray',
} as const;

const open = { stdout: true, stderr: true };

/** Keeps the demo running when its reader goes away (see above). Call once, first. */
export function survivePipeClosing(): void {
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      open[name] = false;
    });
  }
}

export function print(text: string): void {
  if (open.stdout) process.stdout.write(`${text}\n`);
}

export function printError(text: string): void {
  if (open.stderr) process.stderr.write(`${styleText('red', text)}\n`);
  else print(text);
}

/** One readable line per JSON log line: time, service, level, message, then the details. */
export function printLine(name: string, line: string): void {
  if (!open.stdout) return; // nobody reads: do not even parse
  let text = line;
  try {
    const { time, level, msg, service: _s, name: _n, pid: _p, hostname: _h, ...rest } = JSON.parse(line);
    const when = new Date(time).toISOString().slice(11, 23);
    const details = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
    const label =
      level >= 50 ? styleText('red', 'ERROR') : level >= 40 ? styleText('yellow', 'WARN ') : 'INFO ';
    text = `${styleText('dim', when)} ${label} ${msg}${styleText('dim', details)}`;
  } catch {
    // not JSON (a stack trace, say): print as is
  }
  const color = colors[name.replace(/-2$/, '') as keyof typeof colors] ?? 'white';
  print(`${styleText(color, name.padEnd(15))} │ ${text}`);
}

/** A line of the demo's own, in the same shape as the services' log lines. */
export function say(name: string, msg: string): void {
  printLine(name, JSON.stringify({ time: Date.now(), level: 30, msg }));
}
