import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

const create = (key: string, body: Record<string, unknown>) =>
  t.request('POST', '/v1/payment-links', { key, body: { amount: 2500, currency: 'usd', ...body } });
const patch = (key: string, id: string, body: Record<string, unknown>) => t.request('PATCH', `/v1/payment-links/${id}`, { key, body });
const get = (key: string, id: string) => t.request('GET', `/v1/payment-links/${id}`, { key });
const slug = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;
const page = async (url: string) => (await fetch(url)).text();

describe('slugs are unique across accounts and modes, first come', () => {
  it("when another account's live link asks for the slug of a test link already shared, then 400 on slug, and the first link keeps its url and its page", async () => {
    const a = await t.account();
    const b = await t.account();
    const s = slug('spring-sale');
    const first = await create(a.test, { slug: s, name: 'Test link of A', description: 'Test link of A' });
    expect(first.status).toBe(200);
    expect(first.body.url).toBe(`${t.url}/l/${s}`);

    const taker = await create(b.live, { slug: s, name: 'Live link of B', description: 'Live link of B' });
    expect(taker.status).toBe(400);
    expect(taker.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'slug' });
    // Nothing about the account that holds it.
    expect(JSON.stringify(taker.body)).not.toContain(a.accountId);
    expect(JSON.stringify(taker.body)).not.toContain(first.body.id);
    expect((await t.sql`select count(*)::int as n from payment_links where slug = ${s}`)[0]!.n).toBe(1);

    const again = await get(a.test, first.body.id);
    expect(again.body.url).toBe(`${t.url}/l/${s}`);
    expect(again.body.slug).toBe(s);
    const html = await page(`${t.url}/l/${s}`);
    expect(html).toContain('Test link of A');
    expect(html).not.toContain('Live link of B');
  });

  it('when the slug is taken by a link of the same account in the other mode or by another account, then the answer is the same', async () => {
    const a = await t.account();
    const b = await t.account();
    const s = slug('same-answer');
    expect((await create(a.live, { slug: s })).status).toBe(200);
    const own = await create(a.test, { slug: s });
    const other = await create(b.test, { slug: s });
    expect(own.status).toBe(400);
    expect(other.status).toBe(400);
    expect(other.body.error).toEqual(own.body.error);
    // And through PATCH.
    const mine = await create(b.test, {});
    const moved = await patch(b.test, mine.body.id, { slug: s });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toEqual(own.body.error);
    expect((await get(b.test, mine.body.id)).body.url).toBe(`${t.url}/l/${mine.body.id}`);
  });

  it('when a merchant renames or clears its slug, then its url follows, and the old slug stays with that merchant only', async () => {
    const a = await t.account();
    const b = await t.account();
    const s = slug('renamed');
    const link = (await create(a.test, { slug: s, name: 'Renamed link' })).body;
    const renamed = await patch(a.test, link.id, { slug: `${s}-new` });
    expect(renamed.status).toBe(200);
    expect(renamed.body.url).toBe(`${t.url}/l/${s}-new`);

    // The URL shared before the rename never opens another merchant's link.
    const taker = await create(b.live, { slug: s });
    expect(taker.status).toBe(400);
    expect(taker.body.error.param).toBe('slug');
    // The merchant that used it may use it again, in either mode.
    const reuse = await create(a.live, { slug: s, name: 'A again', description: 'A again' });
    expect(reuse.status).toBe(200);
    expect(await page(`${t.url}/l/${s}`)).toContain('A again');

    const cleared = await patch(a.test, link.id, { slug: null });
    expect(cleared.body.url).toBe(`${t.url}/l/${link.id}`);
    expect((await create(b.test, { slug: `${s}-new` })).status).toBe(400);
  });

  it('when 12 creates from several accounts and modes race for one slug, then exactly one wins and holds the url', async () => {
    const accounts = await Promise.all([t.account(), t.account(), t.account()]);
    const keys = accounts.flatMap((a) => [a.test, a.live, a.test, a.live]);
    const s = slug('race');
    const answers = await Promise.all(keys.map((k, i) => create(k, { slug: s, name: `racer ${i}`, description: `racer ${i}` })));
    const winners = answers.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'slug' });
    }
    expect(winners[0]!.body.url).toBe(`${t.url}/l/${s}`);
    expect(await page(`${t.url}/l/${s}`)).toContain(winners[0]!.body.description);
    const rows = await t.sql`select id from payment_links where slug = ${s}`;
    expect(rows.map((r) => r.id)).toEqual([winners[0]!.body.id]);
  });
});

describe('migration 0007 on data with duplicate slugs', () => {
  it('when old links share a slug, then the migration succeeds: the link that held the URL keeps the slug, and no url changes', async () => {
    const name = `t_slugmig_${randomBytes(5).toString('hex')}`;
    const admin = new URL(inject('databaseUrl'));
    admin.pathname = '/postgres';
    const adminSql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
    const dbUrl = new URL(inject('databaseUrl'));
    dbUrl.pathname = `/${name}`;
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    await adminSql`create database ${adminSql(name)}`;
    const sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
    try {
      const all = fileURLToPath(new URL('../../migrations/', import.meta.url));
      for (const f of await readdir(all)) if (/^000[1-6]_.*\.sql$/.test(f)) await copyFile(path.join(all, f), path.join(dir, f));
      await migrate(sql, dir);

      await sql`insert into accounts (id) values ('acct_a'), ('acct_b')`;
      const link = (id: string, account: string, livemode: boolean, slugValue: string | null) => sql`
        insert into payment_links (id, account_id, livemode, type, slug, amount_cents, currency)
        values (${id}, ${account}, ${livemode}, 'MULTI', ${slugValue}, 100, 'usd')`;
      await link('pl_1', 'acct_a', false, 'shared'); // oldest, test
      await link('pl_2', 'acct_b', true, 'shared'); // live: held /l/shared under the old rule
      await link('pl_3', 'acct_b', false, 'shared');
      await link('pl_4', 'acct_a', false, 'alone');
      await link('pl_5', 'acct_a', false, null);
      const pathsBefore = await sql`select id, payment_link_path(id, slug, livemode) as path from payment_links order by id`;

      expect(await migrate(sql)).toContain('0007_global_slugs.sql');

      const after = await sql`select id, slug, coalesce(slug, id) as path from payment_links order by id`;
      expect(after.map((r) => [r.id, r.slug])).toEqual([
        ['pl_1', null],
        ['pl_2', 'shared'],
        ['pl_3', null],
        ['pl_4', 'alone'],
        ['pl_5', null],
      ]);
      expect(after.map((r) => r.path)).toEqual(pathsBefore.map((r) => r.path));
      const owners = await sql`select slug, account_id from payment_link_slugs order by slug`;
      expect(owners.map((r) => [r.slug, r.account_id])).toEqual([
        ['alone', 'acct_a'],
        ['shared', 'acct_b'],
      ]);
      await expect(link('pl_6', 'acct_a', false, 'shared')).rejects.toMatchObject({ code: '23505' });
    } finally {
      await sql.end();
      await adminSql`drop database if exists ${adminSql(name)} with (force)`;
      await adminSql.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
