// `./dev compose up`, last step: waits until every container of the project is healthy (or, a
// one-shot, has exited 0), then prints where to look. Fails with the logs of a container that
// turned unhealthy or exited with an error, instead of leaving a half-started stack unexplained.
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const project = process.argv[2] ?? 'outbox-reference';
// Past the longest start period of docker-compose.yml's healthchecks (five minutes).
const deadlineMs = Date.now() + 8 * 60_000;

type State = { name: string; status: string; health?: string; exitCode: number };

function containers(): State[] {
  const ids = execFileSync(
    'docker',
    ['ps', '-aq', '--filter', `label=com.docker.compose.project=${project}`],
    {
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter(Boolean);
  if (ids.length === 0) return [];
  const format =
    '{{.Name}}\t{{.State.Status}}\t{{if .State.Health}}{{.State.Health.Status}}{{end}}\t{{.State.ExitCode}}';
  return execFileSync('docker', ['inspect', '--format', format, ...ids], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [name = '', status = '', health = '', exitCode = '0'] = line.split('\t');
      return {
        name: name.replace(/^\//, ''),
        status,
        ...(health ? { health } : {}),
        exitCode: Number(exitCode),
      };
    });
}

// A service without a healthcheck is a one-shot (docker-compose.yml gives every other one a check):
// it is ready once it has exited 0.
const ready = (c: State) => (c.status === 'exited' ? c.exitCode === 0 : c.health === 'healthy');
// A one-shot that failed is final; an unhealthy service may still recover (a slow start on a busy
// host), so it is reported only when the deadline passes.
const failed = (c: State) => c.status === 'exited' && c.exitCode !== 0;

for (;;) {
  const states = containers();
  const broken = states.find(failed);
  if (broken) {
    console.error(`compose: ${broken.name} exited (${broken.exitCode}); its last lines:`);
    console.error(
      execFileSync('docker', ['logs', '--tail', '40', broken.name], { encoding: 'utf8', stdio: 'pipe' }),
    );
    process.exit(1);
  }
  const waiting = states.filter((c) => !ready(c));
  if (states.length > 0 && waiting.length === 0) break;
  if (Date.now() > deadlineMs) {
    console.error(
      `compose: still not healthy after 8 minutes: ${waiting.map((c) => `${c.name} (${c.health ?? c.status})`).join(', ')}; see ./dev compose logs <service>`,
    );
    process.exit(1);
  }
  await sleep(1000);
}

// The console places orders only for a visitor holding the admin token the stack took from this
// shell (docker-compose.yml passes CONSOLE_ADMIN_TOKEN through); without one it only watches.
const token = process.env.CONSOLE_ADMIN_TOKEN;
const consoleLine = token
  ? `http://127.0.0.1:8080/#token=${token}`
  : 'http://127.0.0.1:8080 (watch only; to place orders from it: export CONSOLE_ADMIN_TOKEN=$(openssl rand -hex 16), then ./dev compose up again)';

console.log(`compose: every service is healthy.
  Console     ${consoleLine}
  Orders API  http://127.0.0.1:3001 (POST /orders)
  Prometheus  http://127.0.0.1:9090 (alerts: /alerts)
  Zipkin      http://127.0.0.1:9411/zipkin/
  Kafka       127.0.0.1:9092
Stop it with ./dev compose down; logs with ./dev compose logs -f <service>.`);
