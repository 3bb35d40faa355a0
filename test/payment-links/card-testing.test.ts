import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { sleep } from '../helpers/wait.ts';
import { createLink } from './helpers.ts';
import { DIGITS } from '../helpers/cards.ts';

const DECLINE = DIGITS.declined;

/** One browser at one client address (X-Forwarded-For, believed only when TRUST_PROXY allows). */
class Client extends Payer {
  linkToken = '';
  constructor(t: TestServer, address: string) {
    super(t, { 'x-forwarded-for': address });
  }

  set address(address: string) {
    this.headers['x-forwarded-for'] = address;
  }

  private async postForm(path: string, form: Record<string, string>) {
    const res = await this.post(path, form);
    return { ...res, retryAfter: res.headers.get('retry-after') };
  }

  /** Posts the link's form: the new session's id, or the refusal. */
  async openSession(linkPath: string) {
    // The link page's token is reused for every post, as a scripted client would.
    if (!this.linkToken) {
      await this.get(linkPath);
      this.linkToken = this.token;
    }
    this.token = this.linkToken;
    const res = await this.postForm(linkPath, { src: 'DIRECT', email: 'tester@example.com', name: 'Card Tester' });
    const id = res.status === 303 ? /\/(cs_[0-9a-z]+)/.exec(res.location!)![1]! : null;
    return { ...res, sessionId: id };
  }

  /** Opens the session's page and submits `card` (the session page has its own CSRF token). */
  async tryCard(sessionId: string, card = DECLINE) {
    await this.get(`/checkout/${sessionId}`);
    return this.postForm(`/checkout/${sessionId}/pay`, {
      email: 'tester@example.com',
      name: 'Card Tester',
      card_number: card,
      expiry: '12/34',
      cvc: '123',
    });
  }
}

const sessionsOf = async (t: TestServer, linkId: string) =>
  (await t.sql<{ n: number }[]>`select count(*)::int as n from checkout_sessions where payment_link_id = ${linkId}`)[0]!.n;
const declinesOf = async (t: TestServer, linkId: string) =>
  (await t.sql<{ n: number }[]>`select count(*)::int as n from payments where payment_link_id = ${linkId} and status = 'FAILED'`)[0]!.n;

/** The shipped defaults, so that this file shows what a deployment gets without tuning. */
const DEFAULTS = loadConfig({}).rateLimits;

// The card attempts must reach a processor to be declined (402): test-mode links (the simulator).
// A live link with no live Stripe keys refuses every payer before any session or card (issue 12;
// test/processor/live-off.test.ts), and a live link on Stripe takes the card in Stripe's Payment
// Element; the limits count the same in both modes, before either.
describe('card testing through a link, with the default limits', () => {
  const t = useTestServer({
    env: {
      TRUST_PROXY: 'loopback',
      RATE_LIMIT_LINK_SESSIONS_PER_HOUR: String(DEFAULTS.linkSessionsPerHour),
      RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: String(DEFAULTS.payPerClientPerHour),
      RATE_LIMIT_PAY_PER_SESSION_PER_HOUR: String(DEFAULTS.payPerSessionPerHour),
    },
});
  let key: string;
  beforeAll(async () => {
    key = (await t.account()).test;
  });

  it('when one client posts the link form and declining cards again and again, then it gets 429 pages past the limits and at most the configured card attempts', async () => {
    const link = await createLink(t, key, { slug: null });
    const path = pathOf(link.url);
    const tester = new Client(t, '203.0.113.7');
    const answers = { declined: 0, payThrottled: 0, linkThrottled: 0 };
    let firstLinkThrottle: Awaited<ReturnType<Client['openSession']>> | null = null;
    let sessionsWhenThrottled = -1;

    for (let i = 0; i < 60; i++) {
      const opened = await tester.openSession(path);
      if (opened.status === 429) {
        answers.linkThrottled++;
        if (!firstLinkThrottle) {
          firstLinkThrottle = opened;
          sessionsWhenThrottled = await sessionsOf(t, link.id);
        }
        continue;
      }
      expect(opened.status).toBe(303);
      for (let k = 0; k < 3; k++) {
        const paid = await tester.tryCard(opened.sessionId!);
        if (paid.status === 402) answers.declined++;
        else {
          expect(paid.status).toBe(429);
          expect(paid.html).toContain('Too many payment attempts');
          expect(Number(paid.retryAfter)).toBeGreaterThan(0);
          answers.payThrottled++;
        }
      }
    }

    // Card attempts: bounded by the per-client pay limit, whatever the number of sessions.
    expect(answers.declined).toBe(DEFAULTS.payPerClientPerHour);
    expect(answers.payThrottled).toBe(DEFAULTS.linkSessionsPerHour * 3 - DEFAULTS.payPerClientPerHour);
    expect(answers.linkThrottled).toBe(60 - DEFAULTS.linkSessionsPerHour);
    expect(firstLinkThrottle!.html).toContain('Too many checkouts were started from your network');
    expect(firstLinkThrottle!.html).toMatch(/<html/i);
    expect(Number(firstLinkThrottle!.retryAfter)).toBeGreaterThan(3000);
    // In the database: one failed payment per card attempt, and no session once throttled.
    expect(await declinesOf(t, link.id)).toBe(DEFAULTS.payPerClientPerHour);
    expect(sessionsWhenThrottled).toBe(DEFAULTS.linkSessionsPerHour);
    expect(await sessionsOf(t, link.id)).toBe(DEFAULTS.linkSessionsPerHour);
    expect(DEFAULTS.payPerClientPerHour).toBeLessThanOrEqual(36); // "a few dozen" per hour
  });

  it('when one client is throttled, then another client address on the same link is not', async () => {
    const link = await createLink(t, key);
    const path = pathOf(link.url);
    const tester = new Client(t, '198.51.100.20');
    for (let i = 0; i < DEFAULTS.linkSessionsPerHour; i++) expect((await tester.openSession(path)).status).toBe(303);
    expect((await tester.openSession(path)).status).toBe(429);

    const payer = new Client(t, '198.51.100.21');
    const opened = await payer.openSession(path);
    expect(opened.status).toBe(303);
    expect((await payer.tryCard(opened.sessionId!, DECLINE)).status).toBe(402);
    expect((await payer.tryCard(opened.sessionId!, DIGITS.visa)).status).toBe(303);
    const [session] = await t.sql`select status from checkout_sessions where id = ${opened.sessionId}`;
    expect(session!.status).toBe('COMPLETE');
  });
});

describe('client address without TRUST_PROXY', () => {
  const t = useTestServer({ env: { RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '3' } });

  it('when TRUST_PROXY is not set, then a client that changes X-Forwarded-For on every post is still one client', async () => {
    const link = await createLink(t, (await t.account()).test);
    const path = pathOf(link.url);
    const statuses: number[] = [];
    const client = new Client(t, '192.0.2.1');
    for (let i = 0; i < 6; i++) {
      client.address = `192.0.2.${i + 1}`;
      statuses.push((await client.openSession(path)).status);
    }
    expect(statuses).toEqual([303, 303, 303, 429, 429, 429]);
    expect(await sessionsOf(t, link.id)).toBe(3);
  });
});

describe('IPv6 clients', () => {
  const t = useTestServer({ env: { TRUST_PROXY: 'loopback', RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '2' } });

  it('when a client takes a new IPv6 address of its /64 for every post, then it is still one client; another /64 is not', async () => {
    const link = await createLink(t, (await t.account()).test);
    const path = pathOf(link.url);
    const client = new Client(t, '2001:db8:1:2::1');
    const statuses: number[] = [];
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::a:b', '2001:0db8:0001:0002:ffff:1:2:3', '2001:DB8:1:2::7']) {
      client.address = address;
      statuses.push((await client.openSession(path)).status);
    }
    expect(statuses).toEqual([303, 303, 429, 429]);
    client.address = '2001:db8:1:3::1';
    expect((await client.openSession(path)).status).toBe(303);
    expect(await sessionsOf(t, link.id)).toBe(3);
  });
});

/** A Redis of this file only, on a free port: the shared one is never stopped. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  for (let i = 0; ; i++) {
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return child;
    } catch (err) {
      if (i > 50) throw err;
      await new Promise((r) => setTimeout(r, 100)); // a poll until the private Redis answers (fault drill)
    }
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

async function stopRedis(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

describe('Redis down', () => {
  let port: number;
  let redis: ChildProcess;
  // After hooks run in reverse order: the server closes before its Redis stops.
  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
  });
  afterAll(() => stopRedis(redis));
  const t = useTestServer(() => ({
    env: { REDIS_URL: `redis://127.0.0.1:${port}`, TRUST_PROXY: 'loopback', RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '4' },
  }));
  afterAll(async () => {
    // A fresh Redis on the same port lets the server close cleanly.
    if (exited(redis)) redis = await startRedis(port);
    for (let i = 0; i < 100 && t.s.redis.status !== 'ready'; i++) await sleep(100); // a poll until the client has reconnected
  });

  it('when Redis stops, then the limits are counted in memory: answered at once, and still refused past the limit', async () => {
    const link = await createLink(t, (await t.account()).test);
    const path = pathOf(link.url);
    const client = new Client(t, '203.0.113.99');
    expect((await client.openSession(path)).status).toBe(303);
    expect(await t.s.redis.exists(`${t.s.config.redisPrefix}:ratelimit:link-sessions:${link.id}:203.0.113.99`)).toBe(1);

    await stopRedis(redis);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const started = Date.now();
      const res = await client.openSession(path);
      // Liveness, not performance: the limiter never waits on a Redis that is gone.
      expect(Date.now() - started).toBeLessThan(2000);
      statuses.push(res.status === 429 ? 429 : 0);
    }
    // The memory count starts afresh in this process: 4 more, then refused.
    expect(statuses).toEqual([0, 0, 0, 0, 429, 429, 429]);
  });
});
