// `npm run check`: what production still needs, read from this shell's settings (the deployment's
// environment when run in its release step or on its machine). Exit 1 while a required one is missing.
import { loadConfig } from '../src/config.ts';
import { productionChecks } from '../src/ops/production-checks.ts';
import { main, parseCommandLine } from './lib/cli.ts';

const USAGE = `Usage: npm run -s check

Lists the settings production needs (README, "Going live") with this shell's environment: each
"ok", "missing" (required) or "advice" (optional), with what it is for. Values are never printed.
Exit 0 when nothing required is missing, 1 otherwise. GET /readyz answers the same names under
"config" for a running service. No options but -h, --help.
`;

parseCommandLine(USAGE, {});

await main(async () => {
  const checks = productionChecks(loadConfig());
  const lines = checks.map((c) => `${(c.ok ? 'ok' : c.required ? 'missing' : 'advice').padEnd(8)} ${c.setting}: ${c.note}`);
  const missing = checks.filter((c) => c.required && !c.ok).length;
  lines.push(missing ? `${missing} required setting${missing > 1 ? 's' : ''} missing for production` : 'ready for production');
  process.stdout.write(`${lines.join('\n')}\n`);
  if (missing) process.exitCode = 1;
});
