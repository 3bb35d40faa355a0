import { beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../src/search/service.ts';
import { searchStatement } from '../../src/search/store.ts';
import type { Resource } from '../../src/search/fields.ts';
import type { Owner } from '../../src/lib/owner.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

// Names as in life (most unique, a few shared), emails all at example.com (a word in every row).
// Enough rows that reading a whole table would be the planner's choice without the indexes of
// migration 0037, in the searched account
// and in another one; then `vacuum analyze`, so the plans are those of real statistics, not of an empty table.
const N = 60_000;

/** Every shape of clause of each resource, alone and combined with AND and OR. */
const SHAPES: Record<Resource, string[]> = {
  payments: [
    'email:"user123@example.com"',
    'amount>=9990',
    'amount<15',
    'status:"FAILED"',
    'created>1767225600',
    'created<1735700000',
    'created:1750000000',
    'last4:"4242"',
    'currency:jpy',
    'customer:cus_01m8cmq2kk000xmf20mrxvz93s5tw',
    'metadata["order_id"]:"1042"',
    'lovelace',
    'example',
    '"name12345"',
    'email:"user5@example.com" OR last4:1234',
    'lovelace amount>=4000 status:SUCCEEDED',
    '(lovelace OR hopper) AND created>1767225600',
    'metadata["order_id"]:"77" OR email:"user77@example.com"',
  ],
  customers: ['email:"user123@example.com"', 'name:"lovelace"', 'created>1767225600', 'metadata["order_id"]:"1042"', 'navy', 'example', 'lovelace OR email:"user9@example.com"'],
  invoices: [
    'email:"user123@example.com"',
    'status:"PAID"',
    'total>=9990',
    'number:"INV-000042"',
    'currency:jpy',
    'customer:cus_01m8cmq2kk000xmf20mrxvz93s5tw',
    'created>1767225600',
    'metadata["project"]:"kiln"',
    'lovelace',
    'example',
    'lovelace OR total<15',
  ],
  'checkout-sessions': [
    'email:"user123@example.com"',
    'status:"EXPIRED"',
    'amount>=9990',
    'currency:jpy',
    'customer:cus_01m8cmq2kk000xmf20mrxvz93s5tw',
    'created>1767225600',
    'metadata["order_id"]:"1042"',
    'lovelace',
    'example',
    'lovelace OR amount<15',
  ],
};

describe('search plans', () => {
  let owner: Owner;

  beforeAll(async () => {
    const a = await t.account();
    const other = await t.account();
    owner = { accountId: a.accountId, livemode: false };
    const sql = t.sql;
    for (const acc of [a.accountId, other.accountId]) {
      const n = acc === a.accountId ? N : N / 4;
      const tag = acc.slice(-6);
      await sql`
        insert into customers (id, account_id, livemode, email, first_name, last_name, company_name, metadata, created_at)
        select 'cus_' || ${tag} || lpad(i::text, 8, '0'), ${acc}, i % 5 = 0, 'user' || i || '@example.com', 'Name' || i,
          case when i % 1000 = 7 then 'Lovelace' else 'Surname' || (i % 997) end, case when i % 3 = 0 then 'Company ' || i when i % 1000 = 9 then 'Navy' end,
          jsonb_build_object('order_id', i::text), now() - (i || ' minutes')::interval
        from generate_series(1, ${n / 4}) i`;
      await sql`
        insert into checkout_sessions (id, account_id, livemode, status, amount_cents, currency, success_url, customer_id, customer_email, metadata, expires_at, created_at)
        select 'cs_' || ${tag} || lpad(i::text, 8, '0'), ${acc}, i % 5 = 0, (array['OPEN','COMPLETE','EXPIRED'])[1 + i % 3], 1 + (i * 7919) % 10000,
          (array['eur','usd','gbp','jpy'])[1 + i % 4], 'https://example.com', case when i % 10 = 0 then 'cus_' || ${tag} || lpad((i / 10)::text, 8, '0') end,
          'user' || i || '@example.com', jsonb_build_object('order_id', i::text), now() + interval '1 day', now() - (i || ' minutes')::interval
        from generate_series(1, ${n}) i`;
      await sql`
        insert into payments (id, account_id, livemode, status, amount_cents, currency, checkout_session_id, customer_id, email, billing_name, card_brand, card_last4, created_at)
        select 'pay_' || ${tag} || lpad(i::text, 8, '0'), ${acc}, i % 5 = 0, (array['SUCCEEDED','SUCCEEDED','SUCCEEDED','SUCCEEDED','FAILED','PENDING'])[1 + i % 6],
          1 + (i * 7919) % 10000, (array['eur','usd','gbp','jpy'])[1 + i % 4], 'cs_' || ${tag} || lpad(i::text, 8, '0'),
          case when i % 10 = 0 then 'cus_' || ${tag} || lpad((i / 10)::text, 8, '0') end, 'user' || i || '@example.com',
          'Name' || i || ' ' || case when i % 1000 = 7 then 'Lovelace' when i % 1000 = 8 then 'Hopper' else 'Surname' || (i % 997) end, 'visa', lpad(((i * 31) % 10000)::text, 4, '0'),
          now() - (i || ' minutes')::interval
        from generate_series(1, ${n}) i`;
      await sql`
        insert into invoices (id, account_id, livemode, customer_id, number, status, currency, total_cents, hosted_token, metadata, created_at)
        select 'in_' || ${tag} || lpad(i::text, 8, '0'), ${acc}, i % 5 = 0, 'cus_' || ${tag} || lpad((1 + i % ${n / 4})::text, 8, '0'),
          'INV-' || lpad(i::text, 6, '0'), (array['DRAFT','OPEN','PAID','VOID'])[1 + i % 4], (array['eur','usd','gbp','jpy'])[1 + i % 4],
          (i * 7919) % 10000, ${tag} || i, jsonb_build_object('project', 'p' || (i % 100)), now() - (i || ' minutes')::interval
        from generate_series(1, ${n / 2}) i`;
    }
    // What autovacuum does on a live table: statistics, and the GIN indexes' pending entries merged.
    await sql`vacuum analyze customers, checkout_sessions, payments, invoices`;
  }, 180_000);

  const cases = Object.entries(SHAPES).flatMap(([resource, queries]) => queries.map((q) => [resource as Resource, q] as const));

  it.each(cases)('when %s are searched with %j, then no table is read sequentially', async (resource, query) => {
    const stmt = searchStatement(t.sql, owner, resource, compileQuery(resource, query), { limit: 10 });
    const plan = (await t.sql`explain ${stmt}`).map((r) => r['QUERY PLAN'] as string).join('\n');
    expect(plan, plan).not.toMatch(/Seq Scan/);
    expect(plan, plan).toMatch(/Index/);
  });
});
