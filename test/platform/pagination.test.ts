import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

/** A fresh account with `n` customers; ids in creation order (oldest first). */
async function seed(n: number) {
  const key = (await t.account()).test;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await t.request('POST', '/v1/customers', { key, body: { email: `c${i}@example.com` } })).body.id);
  return { key, ids };
}

const list = async (key: string, qs: string) => {
  const res = await t.request('GET', `/v1/customers${qs}`, { key });
  expect(res.status).toBe(200);
  return res.body as { object: string; has_more: boolean; data: Array<{ id: string }> };
};

const pageForward = async (key: string, limit: number) => {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(key, `?limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`);
    seen.push(...page.data.map((c) => c.id));
    if (!page.has_more) return seen;
    cursor = page.data.at(-1)!.id;
  }
};

describe('pagination', () => {
  it('when no limit is given, then 10 rows come back newest first with has_more', async () => {
    const { key, ids } = await seed(12);
    const page = await list(key, '');
    expect(page.object).toBe('list');
    expect(page.data.map((c) => c.id)).toEqual(ids.slice(2).reverse());
    expect(page.has_more).toBe(true);
  });

  it('when paging forward to the end, then every row is seen once in order and has_more ends false', async () => {
    const { key, ids } = await seed(7);
    expect(await pageForward(key, 3)).toEqual([...ids].reverse());
  });

  it('when paging backward with ending_before, then the newer rows come back newest first', async () => {
    const { key, ids } = await seed(6);
    const page = await list(key, `?limit=2&ending_before=${ids[2]}`);
    expect(page.data.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    expect(page.has_more).toBe(true);
    const last = await list(key, `?limit=2&ending_before=${ids[4]}`);
    expect(last.data.map((c) => c.id)).toEqual([ids[5]]);
    expect(last.has_more).toBe(false);
  });

  it('when the cursor row has been deleted, then the cursor still pages from where it stood', async () => {
    const { key, ids } = await seed(5);
    expect((await t.request('DELETE', `/v1/customers/${ids[2]}`, { key })).status).toBe(200);
    const after = await list(key, `?starting_after=${ids[2]}`);
    expect(after.data.map((c) => c.id)).toEqual([ids[1], ids[0]]);
    const before = await list(key, `?ending_before=${ids[2]}`);
    expect(before.data.map((c) => c.id)).toEqual([ids[4], ids[3]]);
  });

  it('when rows are inserted while paging forward, then each older row is seen exactly once', async () => {
    const { key, ids } = await seed(9);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let round = 0; ; round++) {
      const page = await list(key, `?limit=2${cursor ? `&starting_after=${cursor}` : ''}`);
      seen.push(...page.data.map((c) => c.id));
      // New customers arrive between pages, and one already-seen row is deleted.
      await t.request('POST', '/v1/customers', { key, body: { email: `new${round}@example.com` } });
      if (round === 1) await t.request('DELETE', `/v1/customers/${seen[0]}`, { key });
      if (!page.has_more) break;
      cursor = page.data.at(-1)!.id;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('when the limit is 1 or 100, then it is honoured', async () => {
    const { key } = await seed(3);
    expect((await list(key, '?limit=1')).data).toHaveLength(1);
    expect((await list(key, '?limit=100')).data).toHaveLength(3);
  });

  describe.each([
    ['limit=0', 'limit', 'parameter_invalid'],
    ['limit=101', 'limit', 'parameter_invalid'],
    ['limit=-1', 'limit', 'parameter_invalid'],
    ['limit=2.5', 'limit', 'parameter_invalid'],
    ['limit=ten', 'limit', 'parameter_invalid'],
    ['limit=', 'limit', 'parameter_invalid'],
    ['limit=1&limit=2', 'limit', 'parameter_invalid'],
    ['starting_after=nope', 'starting_after', 'parameter_invalid'],
    ['starting_after=pl_01m7zzzzzzzzzzzzzzzzzzzzzz', 'starting_after', 'parameter_invalid'],
    ['ending_before=cus_x', 'ending_before', 'parameter_invalid'],
    ['sort=asc', 'sort', 'parameter_unknown'],
  ])('when the query is ?%s', (qs, param, code) => {
    it(`then 400 ${code} naming ${param}`, async () => {
      const res = await t.request('GET', `/v1/customers?${qs}`, { key: (await t.account()).test });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    });
  });

  it('when both cursors are sent, then 400 invalid_request_error', async () => {
    const { key, ids } = await seed(3);
    const res = await t.request('GET', `/v1/customers?starting_after=${ids[2]}&ending_before=${ids[0]}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.code).toBe('pagination_cursors_conflict');
  });

  it('when a deep page is planned, then Postgres walks the keyset index rather than skipping rows', async () => {
    const { key, ids } = await seed(3);
    const [acct] = await t.sql`select account_id from api_keys where last4 = ${key.slice(-4)} limit 1`;
    // A three-row table is cheaper to scan; forbid scans and sorts to see whether an index serves the query.
    const plan = await t.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      await tx`set local enable_sort = off`;
      return tx.unsafe(
        `explain select * from customers where account_id = $1 and livemode = false and id < $2 order by id desc limit 11`,
        [acct!.account_id, ids[1]!],
      );
    });
    const text = plan.map((r: any) => r['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan Backward using customers_page|Index Scan using customers_page/);
    expect(text).not.toMatch(/Sort|Seq Scan|Filter/);
  });
});
