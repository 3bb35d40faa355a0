import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { freePort, root, runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

// Issue 22, point 2: the commands find the service through one rule, PAYMENTS_API_BASE, else
// PUBLIC_BASE_URL, else http://localhost:$PORT; listen's "unreachable" line says where its address
// came from and how to give another. The service here is on an ephemeral port, never 3000.

const t = useTestServer();
const portOf = (url: string) => new URL(url).port;

/** listen as the bin runs it, with only the environment given (no --api-base), until a line matches `line`; then stopped. */
async function listenUntil(env: NodeJS.ProcessEnv, line: RegExp): Promise<string[]> {
  const child = spawn(process.execPath, ['scripts/payments-service.ts', 'listen', '--forward-to', 'http://127.0.0.1:9/webhooks', '--interval', '100'], {
    cwd: root,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const lines = () => output.split('\n').filter(Boolean);
  try {
    await eventually(async () => lines().some((l) => line.test(l)), 15_000, 25).catch(() => {
      throw new Error(`no line matching ${line}; output:\n${output}`);
    });
    return lines();
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('the service address of the commands', () => {
  it('when PAYMENTS_API_BASE names the service, then listen follows it without --api-base', async () => {
    const { test } = await t.account();
    const lines = await listenUntil({ PAYMENTS_API_KEY: test, PAYMENTS_API_BASE: t.url, PORT: '1' }, /^Ready: forwarding/);
    expect(lines).toContain(`Ready: forwarding all test events from ${t.url} to http://127.0.0.1:9/webhooks (^C to quit)`);
  });

  it('when only PORT is set, then listen follows http://localhost:$PORT', async () => {
    const { test } = await t.account();
    const lines = await listenUntil({ PAYMENTS_API_KEY: test, PORT: portOf(t.url) }, /^Ready: forwarding/);
    expect(lines).toContain(`Ready: forwarding all test events from http://localhost:${portOf(t.url)} to http://127.0.0.1:9/webhooks (^C to quit)`);
  });

  it('when nothing answers at the address, then listen says where the address came from and names --api-base and PAYMENTS_API_BASE', async () => {
    const { test } = await t.account();
    const port = await freePort();
    const fromVar = await listenUntil({ PAYMENTS_API_KEY: test, PAYMENTS_API_BASE: `http://127.0.0.1:${port}` }, /is unreachable/);
    expect(fromVar.find((l) => /is unreachable/.test(l))).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d  the API at http://127\\.0\\.0\\.1:${port} is unreachable \\(ECONNREFUSED\\): retrying; events meanwhile will follow\\. Is the service running at http://127\\.0\\.0\\.1:${port} \\(from PAYMENTS_API_BASE\\)\\? Give its address with --api-base <url> or PAYMENTS_API_BASE\\.$`,
      ),
    );
    const fromPort = await listenUntil({ PAYMENTS_API_KEY: test, PORT: String(port) }, /is unreachable/);
    expect(fromPort.find((l) => /is unreachable/.test(l))).toContain(`the API at http://localhost:${port} is unreachable`);
    expect(fromPort.find((l) => /is unreachable/.test(l))).toContain(`(from PORT)? Give its address with --api-base <url> or PAYMENTS_API_BASE.`);
  });

  it.each([
    ['PAYMENTS_API_BASE', (url: string) => ({ PAYMENTS_API_BASE: url, PORT: '1' }), (url: string) => url],
    ['PORT', (url: string) => ({ PORT: portOf(url) }), (url: string) => `http://localhost:${portOf(url)}`],
    ['PUBLIC_BASE_URL', (url: string) => ({ PUBLIC_BASE_URL: url, PAYMENTS_API_BASE: 'http://127.0.0.1:1' }), (url: string) => url],
  ])('when users:create runs with %s set, then its set-password link points at that address', async (_name, env, expected) => {
    const { accountId } = await t.account();
    const r = await runScript('scripts/create-user.ts', ['--account', accountId, '--email', `link-${_name.toLowerCase()}@example.com`], {
      PATH: process.env.PATH,
      DATABASE_URL: t.s.config.databaseUrl,
      LOG_LEVEL: 'silent',
      ...env(t.url),
    }).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${expected(t.url).replace(/[.]/g, '\\.')}/dashboard/set-password\\?token=[A-Za-z0-9_-]{43}\\n$`));
  });
});
