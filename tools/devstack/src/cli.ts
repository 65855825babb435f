import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { kafkaCommand } from './commands/kafka.ts';
import { postgresPairCommand } from './commands/postgresPair.ts';
import { MissingToolError } from './tools.ts';

/**
 * Developer stack CLI: `node tools/devstack/src/cli.ts <command> [args]`.
 * Each command receives the remaining arguments and resolves with the process exit code.
 * To add a command, implement it under ./commands/ and register it here.
 */
const commands: Record<string, (args: string[]) => Promise<number>> = {
  kafka: kafkaCommand,
  'postgres-pair': postgresPairCommand,
};

const usage = `Usage: node tools/devstack/src/cli.ts <command> [args]
Commands: ${Object.keys(commands).join(', ')}`;

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (command === undefined) {
    console.error(name === undefined ? usage : `Unknown command "${name}".\n${usage}`);
    return 2;
  }
  return command(args);
}

fixKafkajsIdleTimerLoop();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Missing tools and our own errors carry instructions; a stack trace would only bury them.
    const message = error instanceof Error ? error.message : String(error);
    console.error(error instanceof MissingToolError ? message : `Error: ${message}`);
    process.exitCode = 1;
  },
);
