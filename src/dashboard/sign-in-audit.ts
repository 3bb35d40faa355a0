import { recordAudit } from '../audit/store.ts';
import type { Sql } from '../db/sql.ts';
import { insertSession, type UserRow } from './store.ts';

/**
 * The audit records of sign-ins (issue 25): a session starts in the same transaction as its
 * `user.signed_in` event; a wrong password for an email that is a user of an account is recorded
 * in that account (`user.sign_in_failed`; an email that is no user belongs to no account and is
 * only logged). Never the password.
 */
export async function startAuditedSession(sql: Sql, userId: string, ip: string | null): Promise<string> {
  return (await sql.begin(async (tx) => {
    const [user] = await tx<Pick<UserRow, 'id' | 'account_id' | 'email'>[]>`select id, account_id, email from dashboard_users where id = ${userId}`;
    if (!user) throw new Error(`dashboard user ${userId} is gone`);
    const token = await insertSession(tx, user.id);
    await recordAudit(tx, { accountId: user.account_id, livemode: null, actor: { type: 'user', id: user.id, label: user.email, ip }, action: 'user.signed_in', object: { type: 'user', id: user.id } });
    return token;
  })) as string;
}

export async function auditFailedSignIn(sql: Sql, candidates: readonly UserRow[], ip: string | null): Promise<void> {
  for (const u of candidates) {
    await recordAudit(sql, { accountId: u.account_id, livemode: null, actor: { type: 'user', id: u.id, label: u.email, ip }, action: 'user.sign_in_failed', object: { type: 'user', id: u.id } });
  }
}
