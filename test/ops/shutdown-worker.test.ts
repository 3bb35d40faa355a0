import { describe, expect, it } from 'vitest';
import { freePort, waitReady } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';
import { alive, procfile, useServiceProcesses, within } from './service-processes.ts';

const SHUTDOWN_TIMEOUT_MS = 20_000;
const p = useServiceProcesses('stopw', SHUTDOWN_TIMEOUT_MS);
const { start, baseEnv } = p;

describe('SIGTERM to the worker process', () => {
  it.each([
    ['npm run start:worker', ['npm', 'run', 'start:worker'], {}],
    ['the Procfile worker line', ['sh', '-c', procfile('worker')], { PATH: '/usr/local/bin:/usr/bin:/bin' }],
  ])('when %s gets SIGTERM, then the worker process stops its workers and exits 0, and nothing is left running', async (_name, command, extra) => {
    const svc = start(command, { ...baseEnv(0), ...extra });
    await eventually(() => Promise.resolve(svc.logs().some((l) => l.msg === 'started')), 20_000);
    const pid = svc.logs().find((l) => l.msg === 'started')?.pid as number;
    expect(pid).toBeGreaterThan(0);
    if (command[0] === 'sh') expect(pid).toBe(svc.child.pid); // exec: the shell became node
    svc.child.kill('SIGTERM');
    expect(await within(svc.done, SHUTDOWN_TIMEOUT_MS)).toEqual({ code: 0, signal: null });
    expect(svc.logs().some((l) => l.msg === 'stopped' && l.pid === pid)).toBe(true);
    expect(alive(pid)).toBe(false);
  }, 120_000);
});

describe('SIGTERM with a job that outlasts the timeout', () => {
  it('when a webhook delivery is still waiting on its receiver at SIGTERM, then the process exits 0 within SHUTDOWN_TIMEOUT_MS, and another worker delivers the event once the lock lapses', async () => {
    const { startReceiver } = await import('../helpers/receiver.ts');
    const receiver = await startReceiver((n) => (n === 0 ? 'hang' : 200));
    const port = await freePort();
    const env = {
      ...baseEnv(port),
      // A prefix of its own: the processes of the tests above (WORKER_LOCK_MS 30 s) leave the queue's
      // stalled-check marker set for up to 30 s, which would hold off this test's stall check.
      REDIS_PREFIX: p.prefix(`${p.dbName}_late`),
      SHUTDOWN_TIMEOUT_MS: '4000',
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_ALLOW_INSECURE_TARGETS: 'true',
      WORKER_LOCK_MS: '1000',
    };
    const svc = start(['node', 'src/main.ts'], env);
    try {
      await waitReady(`http://127.0.0.1:${port}/readyz`, svc.child, svc.stderr);
      const api = (method: string, path: string, body?: unknown) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${p.secret()}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));
      const endpoint = await api('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/hook`, enabled_events: ['checkout.session.expired'] });
      expect(endpoint.status).toBe(200);
      const session = await api('POST', '/v1/checkout/sessions', { amount: 1200, currency: 'usd', success_url: 'https://example.com/ok' });
      expect((await api('POST', `/v1/checkout/sessions/${session.body.id}/expire`)).status).toBe(200);
      await receiver.waitFor(1); // the first attempt now hangs in the worker

      const signalledAt = Date.now();
      svc.child.kill('SIGTERM');
      expect(await within(svc.done, 4000)).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalledAt).toBeLessThan(4000);
      expect(svc.logs().some((l) => String(l.msg).startsWith('shutdown: jobs still running were left'))).toBe(true);

      // A new worker takes the job over once its lock has lapsed, and the delivery succeeds.
      const worker = start(['node', 'src/worker.ts'], env);
      const [, second] = await receiver.waitFor(2, 20_000);
      expect(JSON.parse(second!.body)).toMatchObject({ type: 'checkout.session.expired', data: { object: { id: session.body.id } } });
      worker.child.kill('SIGTERM');
      expect(await within(worker.done, 4000)).toEqual({ code: 0, signal: null });
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
