import { describe, expect, it } from 'vitest';
import { canonical } from '../../src/idempotency/middleware.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

const post = (key: string, idem: string, body: unknown, path = '/v1/customers') =>
  t.request('POST', path, { key, body, headers: { 'idempotency-key': idem } });

const countByEmail = async (email: string) => (await t.sql`select count(*)::int as n from customers where email = ${email}`)[0]!.n;

describe('Idempotency-Key', () => {
  it('when a POST is repeated with the same key and body, then the first answer is replayed and one record exists', async () => {
    const { test } = await t.account();
    const first = await post(test, 'k-1', { email: 'idem@example.com', metadata: { a: '1', b: '2' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same parameters in another key order: the same request.
    const again = await post(test, 'k-1', { metadata: { b: '2', a: '1' }, email: 'idem@example.com' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('original-request')).toBe(first.headers.get('request-id'));
    expect(again.body).toEqual(first.body);
    expect(await countByEmail('idem@example.com')).toBe(1);
  });

  it('when the first answer was a 400, then the retry replays the 400', async () => {
    const { test } = await t.account();
    const first = await post(test, 'k-bad', { email: 'nope' });
    expect(first.status).toBe(400);
    const again = await post(test, 'k-bad', { email: 'nope' });
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('when the same key comes with another body or path, then 400 idempotency_error', async () => {
    const { test } = await t.account();
    await post(test, 'k-2', { email: 'one@example.com' });
    const otherBody = await post(test, 'k-2', { email: 'two@example.com' });
    expect(otherBody.status).toBe(400);
    expect(otherBody.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    const otherPath = await post(test, 'k-2', { email: 'one@example.com' }, '/v1/customers/cus_01m7zzzzzzzzzzzzzzzzzzzzzz');
    expect(otherPath.status).toBe(400);
    expect(otherPath.body.error.type).toBe('idempotency_error');
    expect(await countByEmail('two@example.com')).toBe(0);
  });

  it('when a retry differs from the first request only in trailing slash or case, which Express routes the same, then the first answer is replayed', async () => {
    const { test } = await t.account();
    // Express routes these variants (case-insensitive, non-strict routing by default).
    const plain = await post(test, 'variant-probe', { email: 'probe@example.com' }, '/V1/Customers/');
    expect(plain.status).toBe(200);
    expect(plain.body.object).toBe('customer');

    const body = { email: 'slash@example.com' };
    const first = await post(test, 'k-slash', body, '/v1/customers/');
    expect(first.status).toBe(200);
    for (const path of ['/v1/customers', '/V1/Customers', '/v1/CUSTOMERS/?expand=x']) {
      const again = await post(test, 'k-slash', body, path);
      expect(again.status, path).toBe(200);
      expect(again.headers.get('idempotent-replayed'), path).toBe('true');
      expect(again.body.id).toBe(first.body.id);
    }
    expect(await countByEmail('slash@example.com')).toBe(1);
    // Another resource under a similar path is still another request.
    const other = await post(test, 'k-slash', body, '/v1/customers/x/');
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('when parameters are nested far deeper than the call stack, then the fingerprint is computed without recursion', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { b: deep, a: 1 };
    const text = canonical(deep);
    expect(text.startsWith('[{"a":1,"b":[{"a":1,"b":[')).toBe(true);
    expect(text.length).toBeGreaterThan(100_000);
  });

  it('when keys are scoped, then the same key in another mode or account is a new request', async () => {
    const a = await t.account();
    const b = await t.account();
    const body = { email: 'scoped@example.com' };
    const ids = new Set<string>();
    for (const key of [a.test, a.live, b.test]) {
      const res = await post(key, 'shared-key', body);
      expect(res.status).toBe(200);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      ids.add(res.body.id);
    }
    expect(ids.size).toBe(3);
  });

  it('when 20 identical requests race, then exactly one record is created and every answer is the replay or a 409', async () => {
    const { test } = await t.account();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(test, 'race', { email: 'race@example.com' })));
    const ok = answers.filter((r) => r.status === 200);
    const conflicts = answers.filter((r) => r.status === 409);
    expect(ok.length + conflicts.length).toBe(20);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const c of conflicts) expect(c.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_progress' });
    expect(await countByEmail('race@example.com')).toBe(1);
    const later = await post(test, 'race', { email: 'race@example.com' });
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body.id).toBe(ok[0]!.body.id);
  });

  it('when the kept answer is older than 24 hours, then the key starts a new request', async () => {
    const { test, accountId } = await t.account();
    const first = await post(test, 'old', { email: 'old@example.com' });
    await t.sql`update idempotency_keys set created_at = now() - interval '25 hours' where account_id = ${accountId} and key = 'old'`;
    const again = await post(test, 'old', { email: 'old@example.com' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('when a first request died holding the key, then after a minute the key can run again', async () => {
    const { test, accountId } = await t.account();
    await t.sql`insert into idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id)
                values (${accountId}, false, 'stuck', 'x', now() - interval '2 minutes', 'req_dead')`;
    const res = await post(test, 'stuck', { email: 'stuck@example.com' });
    expect(res.status).toBe(200);
    expect(await countByEmail('stuck@example.com')).toBe(1);
  });

  it('when the key is longer than 255 characters, then 400 idempotency_error', async () => {
    const { test } = await t.account();
    const res = await post(test, 'k'.repeat(256), { email: 'long@example.com' });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('idempotency_error');
  });

  it('when a GET carries a key, then it is ignored', async () => {
    const { test } = await t.account();
    const res = await t.request('GET', '/v1/customers', { key: test, headers: { 'idempotency-key': 'g' } });
    expect(res.status).toBe(200);
    expect(await t.sql`select 1 from idempotency_keys where key = 'g'`).toHaveLength(0);
  });
});
