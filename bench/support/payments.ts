// A million payments (or BENCH_ROWS) of one account and mode, seeded by SQL for the exports and
// search benchmarks: generate_series in slices of 100,000 rows, each its own statement.
import type postgres from 'postgres';
import { say } from './base.ts';

export interface SeedOptions {
  accountId: string;
  rows: number;
  /** Also a checkout session for one payment in ten (search reads a payment's metadata from its session). */
  sessions?: boolean;
  /** Another account with a tenth as many rows beside them (its data must never show). */
  otherAccountId?: string;
}

const SLICE = 100_000;

/**
 * Ids `pay_b<i><tag>` in the order of `created_at` (one row a second back from now, the newest
 * last), statuses and currencies in the proportions of a shop, one name in 1,000 a spreadsheet
 * formula, one in 1,000 a "Lovelace" and one a "Hopper" (rare words for free text), and a card's
 * last four digits spread over 10,000 values.
 */
export async function seedPayments(sql: postgres.Sql, o: SeedOptions): Promise<number> {
  const t0 = Date.now();
  // Built after the rows rather than row by row (a trigram GIN index makes a million inserts take
  // minutes): the tables' own indexes, dropped and made again from their exact definitions.
  const tables = o.sessions ? ['payments', 'checkout_sessions'] : ['payments'];
  const indexes = await sql<{ name: string; def: string }[]>`
    select i.indexname as name, i.indexdef as def from pg_indexes i
    where i.schemaname = 'public' and i.tablename = any(${tables})
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`;
  for (const ix of indexes) await sql`drop index ${sql(ix.name)}`;
  const seedAccount = async (accountId: string, rows: number, tag: string, step: number) => {
    for (let from = 1; from <= rows; from += SLICE) {
      const to = Math.min(rows, from + SLICE - 1);
      await sql.begin(async (tx) => {
        await tx`set local statement_timeout = 0`;
        if (o.sessions) {
          await tx`
            insert into checkout_sessions (id, account_id, livemode, status, amount_cents, currency, success_url, customer_email, metadata, expires_at, created_at)
            select 'cs_b' || lpad((i * ${step})::text, 8, '0') || ${tag}, ${accountId}, false, 'COMPLETE', 1 + (i::bigint * 7919) % 10000,
              (array['eur','usd','gbp','jpy'])[1 + i % 4], 'https://example.com', 'user' || i || '@example.com',
              jsonb_build_object('order_id', i::text), now() + interval '1 day', now() - ((${o.rows} - i * ${step}) || ' seconds')::interval
            from generate_series(${from}::int, ${to}::int) i where i % 10 = 0`;
        }
        await tx`
          insert into payments (id, account_id, livemode, status, amount_cents, currency, checkout_session_id, email, billing_name, card_brand, card_last4, failure_code, created_at, succeeded_at)
          select 'pay_b' || lpad((i * ${step})::text, 8, '0') || ${tag}, ${accountId}, false,
            (array['SUCCEEDED','SUCCEEDED','SUCCEEDED','SUCCEEDED','FAILED','PENDING'])[1 + i % 6],
            1 + (i::bigint * 7919) % 10000, (array['eur','usd','gbp','jpy'])[1 + i % 4],
            ${o.sessions ? tx`case when i % 10 = 0 then 'cs_b' || lpad((i * ${step})::text, 8, '0') || ${tag} end` : tx`null`},
            'user' || i || '@example.com',
            case when i % 1000 = 1 then '=HYPERLINK("http://evil.example",' || i || ')'
                 else 'Name' || i || ' ' || case when i % 1000 = 7 then 'Lovelace' when i % 1000 = 8 then 'Hopper' else 'Surname' || (i % 997) end end,
            'visa', lpad(((i::bigint * 31) % 10000)::text, 4, '0'), case when i % 6 = 4 then 'card_declined' end,
            now() - ((${o.rows} - i * ${step}) || ' seconds')::interval, case when i % 6 < 4 then now() - ((${o.rows} - i * ${step}) || ' seconds')::interval end
          from generate_series(${from}::int, ${to}::int) i`;
      });
    }
  };
  await seedAccount(o.accountId, o.rows, 'a', 1);
  // The other account's rows spread over the same time (every tenth second), their ids among ours, as time-ordered ids are.
  if (o.otherAccountId) await seedAccount(o.otherAccountId, Math.max(1, Math.floor(o.rows / 10)), 'z', 10);
  await sql.begin(async (tx) => {
    await tx`set local statement_timeout = 0`;
    await tx`set local maintenance_work_mem = '256MB'`;
    for (const ix of indexes) await tx.unsafe(ix.def);
  });
  await sql`vacuum analyze payments`;
  if (o.sessions) await sql`vacuum analyze checkout_sessions`;
  const seconds = (Date.now() - t0) / 1000;
  say(`seeded ${o.rows.toLocaleString('en-US')} payments${o.sessions ? ' and sessions' : ''} in ${seconds.toFixed(0)} s`);
  return seconds;
}

/** Resident memory of a process in bytes (/proc/<pid>/status VmRSS); NaN where /proc is missing. */
export async function rssBytes(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
