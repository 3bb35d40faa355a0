import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { freePort, root } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint, deliveryRows, emit } from './helpers.ts';

// Issue 22, point 3: examples/receiver.mjs, the README's receiver, as a file of the repository run
// as the README runs it (`node examples/receiver.mjs`, the machine's Node, express from the project).

const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });

interface Run {
  output: () => string;
  exited: Promise<number | null>;
  stop(): void;
}
const running: Run[] = [];
afterEach(() => running.splice(0).forEach((r) => r.stop()));

function receiver(env: Record<string, string>): Run {
  // `node` from PATH, as a reader runs it: the receiver needs no TypeScript and no Node 24.
  const child = spawn('node', ['examples/receiver.mjs'], { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  const r = { output: () => out, exited: new Promise<number | null>((resolve) => child.on('exit', resolve)), stop: () => child.kill() };
  running.push(r);
  return r;
}

const signed = (payload: string, secret: string, age = 0) => {
  const ts = Math.floor(Date.now() / 1000) - age;
  return `t=${ts},v1=${createHmac('sha256', secret).update(`${ts}.${payload}`).digest('hex')}`;
};

describe('examples/receiver.mjs', () => {
  it('when its port is taken, then it exits 1 with one line naming the port and RECEIVER_PORT, and never says it is waiting', async () => {
    const port = await freePort();
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(port, resolve));
    try {
      // PORT is the service's variable: the receiver must not read it.
      const r = receiver({ WEBHOOK_SECRET: 'whsec_test', RECEIVER_PORT: String(port), PORT: String(await freePort()) });
      expect(await r.exited).toBe(1);
      expect(r.output()).toBe(`error: cannot listen on port ${port} (EADDRINUSE): another process has it; set RECEIVER_PORT to a free port\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('when WEBHOOK_SECRET is missing, then it exits 1 saying how to get one', async () => {
    const r = receiver({ RECEIVER_PORT: String(await freePort()) });
    expect(await r.exited).toBe(1);
    expect(r.output()).toMatch(/^error: set WEBHOOK_SECRET to the endpoint's signing secret \(whsec_…\)/);
  });

  it('when a real delivery arrives, then it answers 200 and prints the event; when the signature is bad, stale or missing, then it answers 400 and prints why', async () => {
    const a = await t.account();
    const port = await freePort();
    const ep = await createEndpoint(t, a.test, { url: `http://127.0.0.1:${port}/webhooks`, enabled_events: ['payment.succeeded'] });
    const r = receiver({ WEBHOOK_SECRET: ep.signing_secret, RECEIVER_PORT: String(port) });
    await eventually(async () => r.output().includes(`Waiting for events on http://localhost:${port}/webhooks\n`), 10_000);

    const event = await emit(t, a.accountId, false, 'payment.succeeded');
    await eventually(async () => (await deliveryRows(t, event.id))[0]?.status === 'SUCCEEDED', 15_000);
    expect(r.output()).toContain(`payment.succeeded ${event.id} cus_00000000000000000000000000\n`);

    const body = JSON.stringify((await t.request('GET', `/v1/events/${event.id}`, { key: a.test })).body);
    const post = (payload: string, signature?: string) =>
      fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-event-id': event.id, ...(signature ? { 'service-signature': signature } : {}) },
        body: payload,
      }).then((res) => res.status);
    expect(await post(body, signed(body, ep.signing_secret, 200))).toBe(200); // within the 5 minutes
    expect(await post(body, signed(body, 'whsec_other'))).toBe(400);
    expect(await post(body.replace('"payment.succeeded"', '"payment.failed"'), signed(body, ep.signing_secret))).toBe(400);
    expect(await post(body, signed(body, ep.signing_secret, 400))).toBe(400);
    expect(await post(body)).toBe(400);
    const refused = r.output().split('\n').filter((l) => l.startsWith('refused'));
    expect(refused).toEqual([
      `refused ${event.id}: signature does not match: is WEBHOOK_SECRET the secret of this endpoint (or of listen)? was the body changed?`,
      `refused ${event.id}: signature does not match: is WEBHOOK_SECRET the secret of this endpoint (or of listen)? was the body changed?`,
      // About 400 s: the receiver rounds its own clock's reading.
      expect.stringMatching(new RegExp(`^refused ${event.id}: timestamp 40\\d s from this clock, over the 300 s tolerance \\(a replay, or a clock to fix\\)$`)),
      `refused ${event.id}: no Service-Signature header`,
    ]);
  });
});
