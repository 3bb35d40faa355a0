import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/store.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('the audit log table', () => {
  it('when an event is recorded in a transaction that rolls back, then nothing is kept; committed, it is kept', async () => {
    const { accountId } = await t.account();
    const entry = { accountId, livemode: true, actor: { type: 'system', label: 'test' } as const, action: 'test.done', data: { n: 1 } };
    await t.sql.begin(async (tx) => {
      await recordAudit(tx, entry);
      throw new Error('roll back');
    }).catch(() => {});
    expect(await t.sql`select * from audit_events where account_id = ${accountId}`).toHaveLength(0);
    const id = await t.sql.begin((tx) => recordAudit(tx, entry));
    const [row] = await t.sql`select * from audit_events where id = ${id}`;
    expect(row).toMatchObject({ account_id: accountId, livemode: true, actor_type: 'system', actor_id: null, action: 'test.done', data: { n: 1 } });
  });

  it('when anyone updates or deletes an audit event, then the database refuses', async () => {
    const { accountId } = await t.account();
    const id = await recordAudit(t.sql, { accountId, livemode: null, actor: { type: 'user', id: 'usr_x', label: 'a@example.com', ip: '127.0.0.1' }, action: 'team.user_invited' });
    await expect(t.sql`update audit_events set action = 'x' where id = ${id}`).rejects.toMatchObject({ code: '42501' });
    await expect(t.sql`delete from audit_events where id = ${id}`).rejects.toMatchObject({ code: '42501' });
    expect(await t.sql`select action from audit_events where id = ${id}`).toEqual([{ action: 'team.user_invited' }]);
  });
});
