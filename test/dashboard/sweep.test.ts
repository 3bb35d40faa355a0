import { describe, expect, it } from 'vitest';
import { addUser } from '../../src/dashboard/service.ts';
import { maintenanceWorker } from '../../workers/maintenance.ts';
import { useTestServer } from '../helpers/server.ts';
import { signedIn } from './client.ts';

const t = useTestServer();

/** Runs the maintenance worker's handler as BullMQ would run the scheduled job. */
const runJob = (name: string) => maintenanceWorker.process({ name } as never, t.s);

describe('the hourly clean-up of dashboard sessions and links', () => {
  it('when sessions are past a limit and links are long spent, then the job deletes them and keeps the live ones', async () => {
    const { accountId } = await t.account();
    const live = await signedIn(t, accountId, 'live@example.com');
    await signedIn(t, accountId, 'idle@example.com');
    await signedIn(t, accountId, 'old@example.com');
    const user = (email: string) => t.sql`select id from dashboard_users where email = ${email}`.then(([r]) => r!.id as string);
    await t.sql`update dashboard_sessions set last_seen_at = now() - make_interval(secs => ${t.s.config.dashboard.sessionIdleSeconds + 60}) where user_id = ${await user('idle@example.com')}`;
    await t.sql`update dashboard_sessions set created_at = now() - make_interval(secs => ${t.s.config.dashboard.sessionMaxSeconds + 60}) where user_id = ${await user('old@example.com')}`;
    // A link still valid, one that expired two days ago, one used two days ago (the users' own links were used just now).
    const fresh = await addUser(t.sql, accountId, 'fresh@example.com', 3600);
    const stale = await addUser(t.sql, accountId, 'stale@example.com', 3600);
    if (!fresh.ok || !stale.ok) throw new Error('addUser');
    await t.sql`update dashboard_password_tokens set expires_at = now() - interval '2 days' where user_id = ${stale.user.id}`;
    await t.sql`update dashboard_password_tokens set used_at = now() - interval '2 days' where user_id = ${await user('live@example.com')}`;

    const result = (await runJob('dashboard-sessions-cleanup')) as { removed: number };
    expect(result.removed).toBe(4); // two sessions, two links

    const sessions = await t.sql`select u.email from dashboard_sessions s join dashboard_users u on u.id = s.user_id where u.account_id = ${accountId}`;
    expect(sessions.map((r) => r.email)).toEqual(['live@example.com']);
    expect((await live.get('/dashboard')).status).toBe(200);
    const tokens = await t.sql`select u.email from dashboard_password_tokens p join dashboard_users u on u.id = p.user_id where u.account_id = ${accountId} order by u.email`;
    expect(tokens.map((r) => r.email)).toEqual(['fresh@example.com', 'idle@example.com', 'old@example.com']);
    // Nothing left to remove: the job is idempotent.
    expect(((await runJob('dashboard-sessions-cleanup')) as { removed: number }).removed).toBe(0);
  });

  it('when the worker starts, then the clean-up is scheduled beside the retention job', () => {
    const ids = maintenanceWorker.schedules!(t.s).map((sch) => sch.id);
    expect(ids).toEqual(['retention', 'dashboard-sessions-cleanup', 'portal-sessions-cleanup']);
  });
});
