import { z } from 'zod';
import type { Sql } from '../db/sql.ts';
import { findUserByEmail, insertPasswordToken, insertUser, type UserRow } from './store.ts';

const EMAIL = z.email().max(254);

/** The problem with an email typed for a new user, or null. */
export function emailProblem(email: string): string | null {
  return EMAIL.safeParse(email).success ? null : 'Enter an email address, such as name@example.com.';
}

/** The one-time link that lets a user choose a password. */
export const setPasswordUrl = (publicBaseUrl: string, token: string): string => `${publicBaseUrl}/dashboard/set-password?token=${token}`;

export type AddUserResult = { ok: true; user: UserRow; token: string; created: boolean } | { ok: false; problem: string };

/**
 * A user of the account with this email and a fresh one-time set-password token. `reissue`
 * (the command line) gives an existing user a new link (a forgotten password); an invitation
 * from the dashboard refuses an email that is already a user.
 */
export async function addUser(sql: Sql, accountId: string, rawEmail: string, ttlSeconds: number, reissue = false): Promise<AddUserResult> {
  const email = rawEmail.trim();
  const problem = emailProblem(email);
  if (problem) return { ok: false, problem };
  return sql.begin(async (tx) => {
    // One at a time per account: two invitations of one email cannot both insert.
    await tx`select 1 from accounts where id = ${accountId} for update`;
    let user = await findUserByEmail(tx, accountId, email);
    const created = !user;
    if (user && !reissue) return { ok: false, problem: `${user.email} can already sign in to this account.` };
    user ??= await insertUser(tx, accountId, email);
    const token = await insertPasswordToken(tx, user.id, ttlSeconds);
    return { ok: true, user, token, created };
  });
}
