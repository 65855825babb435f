// Which of the caller's settings reach which of the demo's processes. An operator tries the demo
// with the settings docs/production.md asks for (DATABASE_WAIT_FOR_STANDBY, the timeouts, the
// relay's batch sizes): each variable an app's config accepts goes to the processes of that app,
// and the banner says so. What the demo sets itself, and a name no app knows, get one line each,
// never a silent drop: a setting that never arrived makes the demo look safer than what ran.

/** Where each variable goes: the process names (orders, relay-billing, console…) that take it. */
export type PassOnRules = {
  /** Each process's accepted variables: its app's config schema, as parsed at its start-up. */
  accepts: Record<string, readonly string[]>;
  /** Variables the demo sets itself, each with the reason a value of the caller's is not used. */
  managed: Record<string, string>;
  /** Variables the demo reads itself (its ports, relay modes, Kafka client): no line about them. */
  ownVariables: readonly string[];
  /** A variable with one of these prefixes is meant for a service: unknown, it gets a line. */
  servicePrefixes: readonly string[];
};

type PassedOn = {
  /** Per process, the variables to add to its environment. */
  env: Record<string, Record<string, string>>;
  /** What was passed on, to whom, for the banner. */
  passed: { variable: string; value: string; to: string[] }[];
  /** One line per variable set by the caller and not passed on, saying why. */
  notes: string[];
};

/** Pure: the caller's environment and the rules in, what each process gets out. */
export function passOn(env: Record<string, string | undefined>, rules: PassOnRules): PassedOn {
  const result: PassedOn = { env: {}, passed: [], notes: [] };
  const known = new Set(Object.values(rules.accepts).flat());
  for (const [variable, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined || rules.ownVariables.includes(variable)) continue;
    const reason = rules.managed[variable];
    if (reason !== undefined) {
      result.notes.push(`${variable} is not passed on: ${reason}`);
      continue;
    }
    const to = Object.keys(rules.accepts).filter((name) => rules.accepts[name]?.includes(variable));
    if (to.length > 0) {
      for (const name of to) result.env[name] = { ...result.env[name], [variable]: value };
      result.passed.push({ variable, value, to });
    } else if (rules.servicePrefixes.some((prefix) => variable.startsWith(prefix))) {
      result.notes.push(unknownLine(variable, known));
    }
  }
  return result;
}

function unknownLine(variable: string, known: Set<string>): string {
  const near = [...known].find((name) => editDistance(name, variable) <= 2);
  return `${variable} is no setting of any of the demo's processes: not passed on${near ? ` (did you mean ${near}?)` : ''}`;
}

/** Levenshtein distance, for a typo's suggestion. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Secrets stay out of the terminal: a token's or a password's value is not printed. */
const SECRET = /PASSWORD|TOKEN|SECRET/;

/** The banner's lines: what went where (relays and services grouped), then each note. */
export function describePassOn({ passed, notes }: PassedOn): string[] {
  const lines = passed.map(({ variable, value, to }) => {
    const shown = SECRET.test(variable) ? '(set)' : value;
    return `${variable}=${shown} → ${groupNames(to)}`;
  });
  return [...lines, ...notes];
}

function groupNames(names: string[]): string {
  const relays = names.filter((name) => name.startsWith('relay-'));
  const others = names.filter((name) => !name.startsWith('relay-'));
  const relayPart = relays.length === 3 ? ['the relays'] : relays;
  return [...others, ...relayPart].join(', ');
}
