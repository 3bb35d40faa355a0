import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { withTx } from '../../src/db/tx.ts';
import type { EventType } from '../../src/events/catalogue.ts';
import type { ApiObject } from '../../src/events/presenter.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { freePort, root } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { type Received, type Receiver, startReceiver, verifyWithStripe } from '../helpers/receiver.ts';

// `payments-service listen` end to end: the real command as a child process on the project's Node,
// the real service (its app on the test server's services, stopped and started again for the restart),
// and a local receiver whose every request is checked by two verifiers that are not our code.

const t = useTestServer();

/** The README's description of the signature, implemented here from the text alone. */
function verifyFromReadme(rawBody: string, header: string, secret: string): boolean {
  const pairs = header.split(',').map((p) => p.split('='));
  const ts = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${rawBody}`).digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v!) && timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}

/** Both verifiers must accept the request; answers the event it carries. */
function verified(r: Received, secret: string): { id: string; type: string } {
  expect(verifyFromReadme(r.body, String(r.headers['service-signature']), secret)).toBe(true);
  return verifyWithStripe(r, secret);
}

interface Cli {
  child: ChildProcess;
  out: () => string[];
  err: () => string[];
  exited: Promise<number | null>;
  /** Resolves with the first stdout or stderr line matching `re`. */
  line(re: RegExp, timeoutMs?: number): Promise<string>;
}

const running: ChildProcess[] = [];
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver.close();
});

function spawnCollected(args: string[], env: NodeJS.ProcessEnv): Cli {
  const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const lines = (s: string) => s.split('\n').filter((l) => l !== '');
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    out: () => lines(stdout),
    err: () => lines(stderr),
    exited,
    line: (re, timeoutMs = 10_000) =>
      eventually(async () => [...lines(stdout), ...lines(stderr)].find((l) => re.test(l)), timeoutMs, 25).catch(() => {
        throw new Error(`no line matching ${re} within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`);
      }),
  };
}

/** `payments-service listen` run as the bin runs it, forwarding to the receiver. */
function listen(key: string, extra: string[] = [], apiBase = apiUrl): Cli {
  return spawnCollected(
    ['scripts/payments-service.ts', 'listen', '--api-base', apiBase, '--forward-to', `${receiver.url}/webhooks`, '--interval', '200', ...extra],
    { PAYMENTS_API_KEY: key },
  );
}

async function started(cli: Cli): Promise<string> {
  const secretLine = await cli.line(/signing secret is whsec_/);
  await cli.line(/^Ready: forwarding/);
  return /(whsec_[A-Za-z0-9_-]{43})/.exec(secretLine)![1]!;
}

const customer = (livemode = false): ApiObject =>
  ({ id: `cus_${randomBytes(8).toString('hex')}`, object: 'customer', livemode, email: 'a@example.com' }) as ApiObject;

/** An event recorded as a component records one: recordEvent in its own transaction. */
const emit = (accountId: string, type: EventType, livemode = false) =>
  withTx(t.s, t.s.log, (tx) => recordEvent(tx, t.s, accountId, type, customer(livemode)));

const idsOf = (rs: readonly Received[]) => rs.map((r) => JSON.parse(r.body).id as string);

/**
 * The CLI's polls (GET /v1/events) as the service answered them: the API is served here through a
 * counter (the app on the test server's services), so a test waits on polls, not on the clock.
 */
let polls = 0;
const counting = (app: http.RequestListener): http.RequestListener => (req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/v1/events')) res.on('finish', () => polls++);
  app(req, res);
};
let api: http.Server;
let apiUrl: string;
beforeAll(async () => {
  api = http.createServer(counting(createApp(t.s)));
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  api.closeAllConnections();
  await new Promise((r) => api.close(r));
});

/** Waits until `n` more polls have been answered (default 3): the CLI polls one after another, forwarding what a poll found before the next, so a duplicate or a stray event would have arrived by then. */
const settle = async (n = 3) => {
  const from = polls;
  await eventually(async () => polls >= from + n, 10_000, 10);
};

describe('payments-service listen', () => {
  it('when test events of several types happen, then each is forwarded once, in order, with the body and headers of a delivery, signed with the printed secret', async () => {
    const { accountId, test } = await t.account();
    const other = await t.account();
    const before = await emit(accountId, 'invoice.created'); // already there at start: not forwarded

    const cli = listen(test);
    const secret = await started(cli);
    const types: EventType[] = ['checkout.session.completed', 'payment.succeeded', 'refund.created', 'invoice.paid', 'payment.succeeded'];
    const emitted: { id: string }[] = [];
    for (const type of types) emitted.push(await emit(accountId, type));
    await emit(accountId, 'payment.failed', true); // live mode of the same account
    await emit(other.accountId, 'payment.failed'); // another account

    const got = await receiver.waitFor(types.length, 8000);
    await settle();
    expect(receiver.received).toHaveLength(types.length);
    expect(idsOf(receiver.received)).toEqual(emitted.map((e) => e.id));
    expect(idsOf(receiver.received)).not.toContain(before.id);

    for (const [i, r] of got.entries()) {
      expect(verified(r, secret)).toMatchObject({ id: emitted[i]!.id, type: types[i] });
      expect(r.path).toBe('/webhooks');
      // The same body as GET /v1/events/:id, byte for byte, and a real delivery's headers.
      const api = await fetch(`${t.url}/v1/events/${emitted[i]!.id}`, { headers: { authorization: `Bearer ${test}` } });
      expect(r.body).toBe(await api.text());
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('payments-service-webhooks/1.0');
      expect(r.headers['service-event-id']).toBe(emitted[i]!.id);
      expect(r.headers['service-delivery-id']).toMatch(/^wd_[0-9a-z]{29}$/);
      expect(r.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    }

    // One line per event: time, type, id, the local status code.
    const lines = cli.out().filter((l) => /evt_/.test(l));
    expect(lines).toHaveLength(types.length);
    lines.forEach((l, i) => expect(l).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  ${types[i]!.replace('.', '\\.')}\\s+${emitted[i]!.id}  200 \\(\\d+ ms\\)$`)));

    // The secret is the same on every run with this key, and another key has another.
    const again = spawnCollected(['scripts/payments-service.ts', 'listen', '--print-secret'], { PAYMENTS_API_KEY: test });
    expect(await again.exited).toBe(0);
    expect(again.out()).toEqual([secret]);
    const otherSecret = spawnCollected(['scripts/payments-service.ts', 'listen', '--print-secret', '--api-key', other.test], {});
    expect(await otherSecret.exited).toBe(0);
    expect(otherSecret.out()[0]).toMatch(/^whsec_/);
    expect(otherSecret.out()[0]).not.toBe(secret);
  });

  it('when --events names types, then only those are forwarded; an unknown type is refused at start with one line', async () => {
    const { accountId, test } = await t.account();
    const cli = listen(test, ['--events', 'payment.succeeded,refund.created']);
    const secret = await started(cli);
    const wanted: string[] = [];
    for (const type of ['payment.failed', 'payment.succeeded', 'invoice.sent', 'refund.created'] as const) {
      const e = await emit(accountId, type);
      if (type === 'payment.succeeded' || type === 'refund.created') wanted.push(e.id);
    }
    await receiver.waitFor(2, 8000);
    await settle();
    expect(idsOf(receiver.received)).toEqual(wanted);
    receiver.received.forEach((r) => verified(r, secret));

    const bad = listen(test, ['--events', 'payment.succeeded,payment.teleported']);
    expect(await bad.exited).toBe(1);
    expect(bad.err()).toHaveLength(1);
    expect(bad.err()[0]).toMatch(/^error: unknown event type payment\.teleported/);
  });

  it('when --since is given, then the events created since then are forwarded first, and a local error answer is printed, not retried', async () => {
    const { accountId, test } = await t.account();
    const old = [await emit(accountId, 'invoice.created'), await emit(accountId, 'invoice.finalized')];
    receiver.setBehaviour((n) => (n === 0 ? 500 : 200));
    const cli = listen(test, ['--since', String(Math.floor(Date.now() / 1000) - 30)]);
    const secret = await started(cli);
    const fresh = await emit(accountId, 'invoice.sent');
    await receiver.waitFor(3, 8000);
    await settle();
    expect(idsOf(receiver.received)).toEqual([...old, fresh].map((e) => e.id));
    receiver.received.forEach((r) => verified(r, secret));
    const lines = cli.out().filter((l) => /evt_/.test(l));
    expect(lines.map((l) => / (\d{3}) \(/.exec(l)?.[1])).toEqual(['500', '200', '200']);
  });

  it('when the key is a live key, then listen refuses it at start with one line and forwards nothing', async () => {
    const { accountId, live } = await t.account();
    const cli = listen(live);
    expect(await cli.exited).toBe(1);
    expect(cli.err()).toEqual(['error: listen works in test mode only: use a test key (sk_test_…), not a live key']);
    expect(cli.out()).toEqual([]);
    await emit(accountId, 'payment.succeeded', true);
    expect(receiver.received).toEqual([]);
  });

  it('when a transaction commits its event after a later event was forwarded, then the earlier event is forwarded too, once', async () => {
    const { accountId, test } = await t.account();
    const cli = listen(test);
    const secret = await started(cli);
    let later: { id: string } | undefined;
    // The first event's id is minted inside a transaction that stays open until the second event,
    // committed meanwhile on another connection, has been forwarded, and a few polls more: long
    // enough for a follower without the overlap window to have moved past the first id.
    const earlier = await withTx(t.s, t.s.log, async (tx) => {
      const mintedAt = Date.now();
      const e = await recordEvent(tx, t.s, accountId, 'refund.created', customer());
      later = await emit(accountId, 'refund.updated');
      await receiver.waitFor(1, 8000);
      await settle(); // the follower has polled past the later id (a follower without the overlap window would skip the earlier one now)
      // The time is the subject here, not a wait for work: `created` has one-second resolution, so the
      // earlier id must be more than a second older than the cursor's floor before it commits.
      await new Promise((r) => setTimeout(r, Math.max(0, mintedAt + 2500 - Date.now())));
      return e;
    });
    expect(earlier.id < later!.id).toBe(true);
    await receiver.waitFor(2, 8000);
    await settle();
    expect(idsOf(receiver.received)).toEqual([later!.id, earlier.id]);
    receiver.received.forEach((r) => verified(r, secret));
  });

  describe('across a restart of the service', () => {
    // The service's HTTP side on a port of its own, stopped (connections refused, as while a
    // process restarts) and started again on the same port, over the same database.
    let port: number;
    let server: http.Server | undefined;

    const startWeb = async () => {
      server = http.createServer(counting(createApp(t.s)));
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    };
    const stopWeb = async () => {
      server!.closeAllConnections();
      await new Promise((r) => server!.close(r));
    };

    beforeEach(async () => {
      port = await freePort();
      await startWeb();
    });
    afterEach(async () => {
      if (server?.listening) await stopWeb();
    });

    it('when the service is stopped and started again, then listen says so once each way and forwards every event written meanwhile, none twice', async () => {
      const { accountId, test } = await t.account();
      const cli = listen(test, [], `http://127.0.0.1:${port}`);
      const secret = await started(cli);
      const emitted = [await emit(accountId, 'payment.succeeded')];
      await receiver.waitFor(1, 8000);

      await stopWeb();
      await cli.line(/is unreachable/);
      // Written while the API is down (another process of the service would do the same).
      for (const type of ['payment.refunded', 'refund.created', 'refund.updated'] as const) emitted.push(await emit(accountId, type));
      // Fault drill: a refused connection leaves nothing to wait on; the CLI retries from 200 ms, backing off, so this is a few refused polls.
      await new Promise((r) => setTimeout(r, 600));
      // Then a proxy answering 503 while the service comes up: still the same outage.
      let unavailable = 0;
      const proxy = http.createServer((_req, res) => {
        unavailable++;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"type":"api_error","code":"service_unavailable"}}');
      });
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await eventually(async () => unavailable >= 2, 10_000, 10); // polls answered 503
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      expect(receiver.received).toHaveLength(1);

      await startWeb();
      await cli.line(/is back: catching up/);
      emitted.push(await emit(accountId, 'invoice.paid'));
      await receiver.waitFor(emitted.length, 10_000);
      await settle();
      expect(idsOf(receiver.received)).toEqual(emitted.map((e) => e.id));
      receiver.received.forEach((r) => verified(r, secret));
      expect(cli.err().filter((l) => /is unreachable/.test(l))).toHaveLength(1);
      expect(cli.err().filter((l) => /is back/.test(l))).toHaveLength(1);
      expect(cli.child.exitCode).toBeNull();
    });
  });
});
