import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { useStarted } from './fixture.ts';

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers to the nth request (0-based): a status, or 'hang' (never answers). */
export type Behaviour = (n: number, req: Received) => number | 'hang' | { status: number; body: string };

/** A local webhook receiver that records every request and answers as `behaviour` says. */
export async function startReceiver(behaviour: Behaviour = () => 200) {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  let connections = 0;
  let answer = behaviour;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { at: Date.now(), path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const n = received.push(r) - 1;
      waiters.splice(0).forEach((w) => w());
      const a = answer(n, r);
      if (a === 'hang') return;
      if (typeof a === 'number') res.writeHead(a, { 'content-type': 'text/plain' }).end(`answer ${a}`);
      else res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    get connections() {
      return connections;
    },
    setBehaviour(b: Behaviour) {
      answer = b;
    },
    /** Resolves once `count` requests (matching `filter`) have arrived. */
    async waitFor(count: number, timeoutMs = 15_000, filter: (r: Received) => boolean = () => true): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = received.filter(filter);
        if (got.length >= count) return got;
        if (Date.now() > deadline) throw new Error(`receiver: ${got.length} of ${count} requests after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The webhook receiver of a file (or of a describe block): started in beforeAll, closed in
 * afterAll. The handle reads through to it once started (`receiver.url`, `receiver.received` …
 * inside hooks and tests; a test server's options take them through a function).
 */
export function useReceiver(behaviour?: Behaviour): Receiver {
  const get = useStarted('the receiver', () => startReceiver(behaviour), (r) => r.close());
  return {
    get port() {
      return get().port;
    },
    get url() {
      return get().url;
    },
    get received() {
      return get().received;
    },
    get connections() {
      return get().connections;
    },
    setBehaviour: (b) => get().setBehaviour(b),
    waitFor: (count, timeoutMs, filter) => get().waitFor(count, timeoutMs, filter),
    close: () => get().close(),
  };
}

/**
 * The third-party check: stripe-node's `webhooks.constructEvent`, which implements the same
 * `t=…,v1=…` HMAC-SHA256 scheme with a 300 s tolerance. Throws when no v1 entry matches `secret`.
 */
const stripe = new Stripe('sk_test_unused');
export function verifyWithStripe(r: Received, secret: string): { id: string; type: string } {
  const header = r.headers['service-signature'];
  if (typeof header !== 'string') throw new Error('no Service-Signature header');
  return stripe.webhooks.constructEvent(r.body, header, secret, 300) as unknown as { id: string; type: string };
}
