#!/usr/bin/env node
// The package's command (`bin`): `npx payments-service listen --forward-to http://localhost:4000/webhooks`,
// or `npm run listen -- --forward-to …` from a clone. Node 24 runs this file as it is (type stripping).
import { LISTEN_USAGE, listen, parseListenArgs } from '../src/cli/listen.ts';

const USAGE = `Usage: payments-service <command> [options]

Commands:
  listen   forward your account's test events to a local URL, signed like webhook deliveries

Run \`payments-service listen --help\` for its options.
`;

const [command, ...rest] = process.argv.slice(2);

if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
  (command === undefined ? process.stderr : process.stdout).write(USAGE);
  process.exit(command === undefined ? 1 : 0);
}
if (command !== 'listen') {
  process.stderr.write(`error: unknown command ${command} (see --help)\n`);
  process.exit(1);
}

const { PAYMENTS_API_KEY, PAYMENTS_API_BASE, PUBLIC_BASE_URL, PORT } = process.env;
const parsed = parseListenArgs(rest, { PAYMENTS_API_KEY, PAYMENTS_API_BASE, PUBLIC_BASE_URL, PORT });
if (parsed.kind === 'help') {
  process.stdout.write(LISTEN_USAGE);
  process.exit(0);
}
if (parsed.kind === 'error') {
  process.stderr.write(`error: ${parsed.message}\n`);
  process.exit(1);
}
if (parsed.kind === 'print-secret') {
  process.stdout.write(`${parsed.secret}\n`);
  process.exit(0);
}

// Ctrl-C ends it; nothing is kept between runs but the secret, which is derived from the key.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(0));

const code = await listen(parsed.options, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.exit(code);
