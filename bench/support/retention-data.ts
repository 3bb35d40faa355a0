// The data of the retention benchmark (bench/retention.ts): a "core" identical in the empty and the
// large database (the rows the measured calls read), and, in the large one only, the bulk written
// with COPY: events, one delivery each, three attempts each, spread evenly over 30 days and a bit.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type postgres from 'postgres';
import { idFloor } from '../../src/lib/ids.ts';

const DAY = 24 * 3600 * 1000;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TYPES = ['payment.succeeded', 'checkout.session.completed', 'checkout.session.expired', 'payment.failed', 'refund.created', 'invoice.paid'];

/** A small, fast, seeded generator (mulberry32): the three COPY passes see the same sequence. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function randomChars(next: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[next() & 31];
  return s;
}

/** An id minted at `ms` (time part, sequence 000) with a random part from `next`. */
const idAt = (prefix: 'evt' | 'wd', ms: number, next: () => number) => idFloor(prefix, ms).slice(0, -16) + randomChars(next, 16);

const payload = (i: number, ms: number) =>
  `{"object":{"id":"pay_${i.toString(36).padStart(8, '0')}","object":"payment","livemode":false,"amount":${1000 + (i % 9000)},"currency":"usd","status":"SUCCEEDED",` +
  `"checkout_session_id":"cs_${i.toString(36).padStart(10, '0')}","customer_id":null,"card":{"brand":"visa","last4":"4242"},` +
  `"email":"payer${i % 100000}@example.com","failure_code":null,"failure_message":null,"created":${Math.floor(ms / 1000)}}}`;

export interface Core {
  accountId: string;
  endpointId: string;
  /** An event of an hour ago, delivered (three attempts): the event page and the resend. */
  recentEvent: string;
  /** An event 25 days old: the deep page starts after it. */
  oldEvent: string;
  pendingDue: number;
  coreEvents: number;
}

export const OTHER_ACCOUNTS = 999;
const otherAccount = (n: number) => `acct_bench${String(n).padStart(6, '0')}`;
const otherEndpoint = (n: number) => `we_bench${String(n).padStart(6, '0')}`;

/** The window of the data: from midnight UTC 30 days before `now` up to `now`. */
export function windowOf(now: number): { start: number; end: number } {
  return { start: Math.floor((now - 30 * DAY) / DAY) * DAY, end: now };
}

/** Accounts, endpoints and the core rows: the same ids in every database it is written to. */
export async function writeCore(sql: postgres.Sql, now: number): Promise<Core> {
  const next = prng(7);
  const accountId = 'acct_benchmeasured';
  const endpointId = 'we_benchmeasured';
  const { start } = windowOf(now);
  await sql`insert into accounts (id) select * from unnest(${[accountId, ...Array.from({ length: OTHER_ACCOUNTS }, (_, i) => otherAccount(i))]}::text[])`;
  await sql`insert into webhook_endpoints (id, account_id, livemode, url, secret, enabled_events)
    select e, a, false, 'https://hooks.example.invalid/events', 'whsec_benchbenchbenchbenchbenchbench', array['*']
    from unnest(${[endpointId, ...Array.from({ length: OTHER_ACCOUNTS }, (_, i) => otherEndpoint(i))]}::text[],
                ${[accountId, ...Array.from({ length: OTHER_ACCOUNTS }, (_, i) => otherAccount(i))]}::text[]) as x (e, a)`;
  // Ten delivered events a day over the window, and 200 of the last hour whose retry is due now.
  const delivered = Array.from({ length: 310 }, (_, i) => start + 3600_000 + i * ((now - start - 2 * 3600_000) / 310));
  const due = Array.from({ length: 200 }, (_, i) => now - 3600_000 + i * 10_000);
  const rows = [...delivered.map((ms) => ({ ms, due: false })), ...due.map((ms) => ({ ms, due: true }))].map((r, i) => ({
    ...r,
    event: idAt('evt', r.ms, next),
    delivery: idAt('wd', r.ms + 5, next),
    i,
  }));
  for (const r of rows) {
    const at = new Date(r.ms);
    await sql`insert into events (id, account_id, livemode, type, api_version, data, created_at) values (${r.event}, ${accountId}, false, 'payment.succeeded', '2026-11-01', ${payload(r.i, r.ms)}::text::json, ${at})`;
    await sql`insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, attempt_count, next_attempt_at, last_attempt_at, created_at, updated_at)
      values (${r.delivery}, ${accountId}, false, ${r.event}, ${endpointId}, ${r.due ? 'PENDING' : 'SUCCEEDED'}, ${r.due ? 1 : 3},
              ${r.due ? new Date(now - 60_000) : null}, ${at}, ${at}, ${at})`;
    for (const n of r.due ? [1] : [1, 2, 3]) {
      await sql`insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code) values (${r.delivery}, ${n}, ${new Date(r.ms + n * 1000)}, 40, ${r.due || n < 3 ? 500 : 200})`;
    }
  }
  const nearest = (target: number) => rows.filter((r) => !r.due).reduce((a, b) => (Math.abs(b.ms - target) < Math.abs(a.ms - target) ? b : a));
  return { accountId, endpointId, recentEvent: nearest(now - 3600_000).event, oldEvent: nearest(now - 25 * DAY).event, pendingDue: due.length, coreEvents: rows.length };
}

/** The i-th bulk row: its time, account and the random parts of its ids (the same in every pass). */
interface BulkRow {
  i: number;
  ms: number;
  account: string;
  endpoint: string;
  event: string;
  delivery: string;
}

function* bulkRows(count: number, start: number, end: number, core: Core): Generator<BulkRow> {
  const next = prng(42);
  const step = (end - start) / count;
  for (let i = 0; i < count; i++) {
    const ms = Math.floor(start + i * step);
    const n = next();
    const mine = n % 2 === 0; // half the events are the measured account's
    const other = (n >>> 1) % OTHER_ACCOUNTS;
    yield {
      i,
      ms,
      account: mine ? core.accountId : otherAccount(other),
      endpoint: mine ? core.endpointId : otherEndpoint(other),
      event: idAt('evt', ms, next),
      delivery: idAt('wd', ms + 5, next),
    };
  }
}

/** Lines of COPY text for each bulk row, in chunks of about a megabyte. */
function copyText(rows: Generator<BulkRow>, line: (r: BulkRow) => string): Readable {
  return Readable.from(
    (function* () {
      let chunk: string[] = [];
      let size = 0;
      for (const r of rows) {
        const l = line(r);
        chunk.push(l);
        size += l.length;
        if (size > 1 << 20) {
          yield chunk.join('');
          chunk = [];
          size = 0;
        }
      }
      if (chunk.length) yield chunk.join('');
    })(),
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

export interface BulkTimes {
  events: number;
  deliveries: number;
  attempts: number;
}

/**
 * Writes `count` events over [start, end), one delivery each (SUCCEEDED, but a fiftieth of the last
 * two hours' PENDING with a retry not yet due), three attempts each, with COPY; answers the seconds
 * each table took.
 */
export async function writeBulk(sql: postgres.Sql, count: number, now: number, core: Core, progress: (msg: string) => void): Promise<BulkTimes> {
  const { start } = windowOf(now);
  const end = now - 2 * 3600_000; // the last two hours are the core's
  const timed = async (what: string, perEvent: number, q: string, line: (r: BulkRow) => string): Promise<number> => {
    const t0 = Date.now();
    const writable = await sql.unsafe(q).writable();
    await pipeline(copyText(bulkRows(count, start, end, core), line), writable);
    const s = (Date.now() - t0) / 1000;
    progress(`${what}: ${(count * perEvent).toLocaleString('en-US')} rows in ${s.toFixed(0)} s`);
    return s;
  };
  const pendingFrom = end - 2 * 3600_000;
  const events = await timed(
    'events',
    1,
    'copy events (id, account_id, livemode, type, api_version, data, created_at, sample) from stdin',
    (r) => `${r.event}\t${r.account}\tf\t${TYPES[r.i % TYPES.length]}\t2026-11-01\t${payload(r.i, r.ms)}\t${iso(r.ms)}\tf\n`,
  );
  const deliveries = await timed(
    'deliveries',
    1,
    'copy webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, attempt_count, next_attempt_at, last_attempt_at, created_at, updated_at) from stdin',
    (r) => {
      const pending = r.ms >= pendingFrom && r.i % 50 === 0;
      return `${r.delivery}\t${r.account}\tf\t${r.event}\t${r.endpoint}\t${pending ? 'PENDING' : 'SUCCEEDED'}\t3\t${pending ? iso(now + DAY) : '\\N'}\t${iso(r.ms + 3000)}\t${iso(r.ms)}\t${iso(r.ms + 3000)}\n`;
    },
  );
  const attempts = await timed('attempts', 3, 'copy webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body) from stdin', (r) => {
    const base = `${r.delivery}\t`;
    return (
      `${base}1\t${iso(r.ms + 1000)}\t41\t500\tHTTP 500\tInternal Server Error\n` +
      `${base}2\t${iso(r.ms + 2000)}\t38\t500\tHTTP 500\tInternal Server Error\n` +
      `${base}3\t${iso(r.ms + 3000)}\t35\t200\t\\N\tok\n`
    );
  });
  return { events, deliveries, attempts };
}
