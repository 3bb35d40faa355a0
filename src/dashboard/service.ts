import type { Logger } from 'pino';
import { z } from 'zod';
import type { Db, Sql } from '../db/sql.ts';
import { withTx } from '../db/tx.ts';
import { queueEmail } from '../email/outbox.ts';
import { invitationEmail } from '../email/sign-in-templates.ts';
import { recordAudit } from '../audit/store.ts';
import { ApiError } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import type { Role } from '../team/roles.ts';
import { findUserByEmail, insertPasswordToken, insertUser, type SessionRow, type UserRow } from './store.ts';

const EMAIL = z.email().max(254);

/** The problem with an email typed for a new user, or null. */
export function emailProblem(email: string): string | null {
  return EMAIL.safeParse(email).success ? null : 'Enter an email address, such as name@example.com.';
}

/** The one-time link that lets a user choose a password. */
export const setPasswordUrl = (publicBaseUrl: string, token: string): string => `${publicBaseUrl}/dashboard/set-password?token=${token}`;

export type AddUserResult = { ok: true; user: UserRow; token: string; created: boolean } | { ok: false; problem: string };

/** addUser's work inside the caller's transaction. */
async function addUserIn(tx: Db, accountId: string, email: string, ttlSeconds: number, reissue: boolean, role: Role = 'owner'): Promise<AddUserResult> {
  // One at a time per account: two invitations of one email cannot both insert.
  await tx`select 1 from accounts where id = ${accountId} for update`;
  let user = await findUserByEmail(tx, accountId, email);
  const created = !user;
  if (user && !reissue) return { ok: false, problem: `${user.email} can already sign in to this account.` };
  user ??= await insertUser(tx, accountId, email, role);
  const token = await insertPasswordToken(tx, user.id, ttlSeconds);
  return { ok: true, user, token, created };
}

/**
 * A user of the account with this email and a fresh one-time set-password token; a new user is an
 * owner (the command line makes the first owner of an account). `reissue`
 * (the command line) gives an existing user a new link (a forgotten password); an invitation
 * from the dashboard refuses an email that is already a user. Sends no email (inviteUser does).
 */
export async function addUser(sql: Sql, accountId: string, rawEmail: string, ttlSeconds: number, reissue = false): Promise<AddUserResult> {
  const email = rawEmail.trim();
  const problem = emailProblem(email);
  if (problem) return { ok: false, problem };
  return sql.begin((tx) => addUserIn(tx, accountId, email, ttlSeconds, reissue)) as Promise<AddUserResult>;
}

export type InviteResult = (AddUserResult & { ok: true; emailId: string }) | { ok: false; problem: string };

/**
 * A signed-in owner or administrator invites someone with a role: the new user, its one-time
 * set-password link, the email that carries the link to the invitee and the audit event, in one
 * transaction (the email's send job is enqueued after commit). The email belongs to the account and
 * the mode the inviter is viewing. The link goes only to the invitee's address (outside production
 * without SMTP, to the log): the inviter never sees it, so they cannot choose the password first.
 */
export async function inviteUser(s: Services, log: Logger, inviter: SessionRow, rawEmail: string, role: Role, ip: string | null): Promise<InviteResult> {
  const email = rawEmail.trim();
  const problem = emailProblem(email);
  if (problem) return { ok: false, problem };
  if (role === 'owner' && inviter.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can invite an owner.', 'role');
  const ttl = s.config.dashboard.passwordLinkSeconds;
  return withTx(s, log, async (tx) => {
    const added = await addUserIn(tx.sql, inviter.account_id, email, ttl, false, role);
    if (!added.ok) return added;
    const url = setPasswordUrl(s.config.publicBaseUrl, added.token);
    const expiresAt = new Date(Date.now() + ttl * 1000);
    const row = await queueEmail(tx, s, { accountId: inviter.account_id, livemode: inviter.livemode }, {
      to: added.user.email,
      template: 'invitation',
      relatedObject: added.user.id,
      render: (m) => invitationEmail({ merchantName: m.name, inviterEmail: inviter.email, url, expiresAt }),
    });
    await recordAudit(tx.sql, {
      accountId: inviter.account_id,
      livemode: null,
      actor: { type: 'user', id: inviter.user_id, label: inviter.email, ip },
      action: 'team.user_invited',
      object: { type: 'user', id: added.user.id },
      data: { email: added.user.email, role },
    });
    return { ...added, emailId: row!.id };
  });
}
