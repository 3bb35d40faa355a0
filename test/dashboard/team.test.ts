import { describe, expect, it } from 'vitest';
import { addUser } from '../../src/dashboard/service.ts';
import type { Role } from '../../src/team/roles.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD } from './client.ts';

// The Team page (issue 25, point 2): invitations by email only, role changes, removals that end
// sessions at once, and the account's owners kept (an administrator never touches an owner; the
// last owner stays, even when two owners demote each other at the same moment).
const t = useTestServer();

async function member(accountId: string, email: string, role: Role): Promise<DashClient> {
  await createUser(t, accountId, email);
  await t.sql`update dashboard_users set role = ${role} where account_id = ${accountId} and email = ${email}`;
  const c = new DashClient(t);
  expect((await c.signIn(email, PASSWORD)).status).toBe(303);
  await c.get('/dashboard/team');
  return c;
}
const idOf = async (email: string) => (await t.sql<{ id: string }[]>`select id from dashboard_users where email = ${email}`)[0]!.id;
const roleOf = async (email: string) => (await t.sql<{ role: string }[]>`select role from dashboard_users where email = ${email}`)[0]?.role;
const linkOf = async (email: string) =>
  /(http\S+\/dashboard\/set-password\?token=[A-Za-z0-9_-]{43})/.exec((await t.sql<{ text_body: string }[]>`select text_body from emails where to_address = ${email}`)[0]!.text_body)![1]!;

describe('invitations', () => {
  it('when an owner invites someone with a role, then the link is emailed and never shown to the inviter; the invitee sets a password and signs in with that role', async () => {
    const { accountId } = await t.account();
    const owner = await member(accountId, 'owner@inv.example', 'owner');
    const sent = await owner.post('/dashboard/team/invitations', { email: 'dev@inv.example', role: 'developer' });
    expect(sent.status).toBe(303);
    const page = await owner.get(sent.location!);
    const link = await linkOf('dev@inv.example');
    const token = link.split('token=')[1]!;
    for (const html of [sent.html, page.html]) expect(html).not.toContain(token);
    expect(await roleOf('dev@inv.example')).toBe('developer');
    // The invitee, from the email: choose the password, sign in, and be a developer.
    const invitee = new DashClient(t);
    await invitee.get(new URL(link).pathname + new URL(link).search);
    expect((await invitee.post('/dashboard/set-password', { token, password: PASSWORD, confirm: PASSWORD })).status).toBe(303);
    expect((await invitee.signIn('dev@inv.example', PASSWORD)).status).toBe(303);
    expect((await invitee.get('/dashboard/api-keys')).status).toBe(200);
    expect((await invitee.get('/dashboard/team')).status).toBe(403);
  });

  it('when an administrator invites an owner, then it is refused; an administrator may invite the other roles', async () => {
    const { accountId } = await t.account();
    await member(accountId, 'owner@adm.example', 'owner');
    const admin = await member(accountId, 'admin@adm.example', 'administrator');
    expect((await admin.post('/dashboard/team/invitations', { email: 'boss@adm.example', role: 'owner' })).status).toBe(403);
    expect(await roleOf('boss@adm.example')).toBeUndefined();
    await admin.get('/dashboard/team');
    expect((await admin.post('/dashboard/team/invitations', { email: 'help@adm.example', role: 'support' })).status).toBe(303);
    expect(await roleOf('help@adm.example')).toBe('support');
  });

  it('when users:create makes the first user of an account, then that user is an owner', async () => {
    const { accountId } = await t.account();
    const r = await addUser(t.sql, accountId, 'first@cli.example', 3600);
    expect(r.ok && r.user.role).toBe('owner');
  });
});

describe('removals and roles', () => {
  it("when a user is removed, then their open session is refused at its next request and their pending invitation's link no longer works", async () => {
    const { accountId } = await t.account();
    const owner = await member(accountId, 'owner@rm.example', 'owner');
    const leaver = await member(accountId, 'leaver@rm.example', 'developer');
    expect((await leaver.get('/dashboard/payments')).status).toBe(200);
    await owner.post('/dashboard/team/invitations', { email: 'pending@rm.example', role: 'analyst' });
    const link = await linkOf('pending@rm.example');

    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${await idOf('leaver@rm.example')}/remove`, {})).location).toBe('/dashboard/team?done=removed');
    const next = await leaver.get('/dashboard/payments');
    expect(next.status).toBe(303);
    expect(next.location).toBe('/dashboard/sign-in');
    expect((await new DashClient(t).signIn('leaver@rm.example', PASSWORD)).status).toBe(401);
    expect(await t.sql`select 1 from dashboard_sessions s join dashboard_users u on u.id = s.user_id where u.email = 'leaver@rm.example'`).toHaveLength(0);

    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${await idOf('pending@rm.example')}/remove`, {})).status).toBe(303);
    expect((await new DashClient(t).get(new URL(link).pathname + new URL(link).search)).status).toBe(410);
  });

  it('when a role changes, then the next request of their open session has the new role', async () => {
    const { accountId } = await t.account();
    const owner = await member(accountId, 'owner@role.example', 'owner');
    const dev = await member(accountId, 'dev@role.example', 'developer');
    expect((await dev.get('/dashboard/api-keys')).status).toBe(200);
    expect((await owner.post(`/dashboard/team/users/${await idOf('dev@role.example')}/role`, { role: 'support' })).status).toBe(303);
    expect((await dev.get('/dashboard/api-keys')).status).toBe(403);
    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${await idOf('dev@role.example')}/role`, { role: 'boss' })).status).toBe(400);
  });

  it('when an administrator changes or removes an owner, or makes an owner, then it is refused and nothing changes', async () => {
    const { accountId } = await t.account();
    await member(accountId, 'owner@guard.example', 'owner');
    const admin = await member(accountId, 'admin@guard.example', 'administrator');
    await member(accountId, 'dev@guard.example', 'developer');
    const owner = await idOf('owner@guard.example');
    expect((await admin.post(`/dashboard/team/users/${owner}/role`, { role: 'analyst' })).status).toBe(403);
    await admin.get('/dashboard/team');
    expect((await admin.post(`/dashboard/team/users/${owner}/remove`, {})).status).toBe(403);
    await admin.get('/dashboard/team');
    expect((await admin.post(`/dashboard/team/users/${await idOf('dev@guard.example')}/role`, { role: 'owner' })).status).toBe(403);
    expect([await roleOf('owner@guard.example'), await roleOf('dev@guard.example')]).toEqual(['owner', 'developer']);
    // The page offers no control over the owner to an administrator.
    expect((await admin.get('/dashboard/team')).html).not.toContain(`/dashboard/team/users/${owner}/`);
  });

  it('when the last owner demotes or removes themself, then it is refused', async () => {
    const { accountId } = await t.account();
    const owner = await member(accountId, 'only@last.example', 'owner');
    const id = await idOf('only@last.example');
    const res = await owner.post(`/dashboard/team/users/${id}/role`, { role: 'administrator' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('at least one owner');
    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${id}/remove`, {})).status).toBe(400);
    expect(await roleOf('only@last.example')).toBe('owner');
  });

  it('when two owners demote each other at the same moment, then one change wins and the account keeps one owner', async () => {
    for (let round = 0; round < 5; round++) {
      const { accountId } = await t.account();
      const [x, y] = [`x${round}@race.example`, `y${round}@race.example`];
      const cx = await member(accountId, x, 'owner');
      const cy = await member(accountId, y, 'owner');
      const [ix, iy] = [await idOf(x), await idOf(y)];
      const answers = await Promise.all([cx.post(`/dashboard/team/users/${iy}/role`, { role: 'developer' }), cy.post(`/dashboard/team/users/${ix}/role`, { role: 'developer' })]);
      // The loser is refused either way: by the one-owner rule (400) when its role was read before
      // the winner's change committed, or as no longer an owner (403) when it was read after.
      const [won, lost] = answers.toSorted((a, b) => a.status - b.status);
      expect(won!.status).toBe(303);
      expect([400, 403]).toContain(lost!.status);
      expect(lost!.html).toContain(lost!.status === 400 ? 'at least one owner' : 'Your role (developer) does not allow');
      expect(await t.sql`select count(*)::int as n from dashboard_users where account_id = ${accountId} and role = 'owner'`).toEqual([{ n: 1 }]);
    }
  });
});
