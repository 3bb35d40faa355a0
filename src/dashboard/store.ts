import { newId } from '../lib/ids.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { Db, Sql } from '../db/sql.ts';
import type { Role } from '../team/roles.ts';

/** A dashboard user; password_hash is never presented anywhere. */
export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  created_at: Date;
  last_sign_in_at: Date | null;
}

/** A signed-in session joined with its user and the account's business name. */
export interface SessionRow {
  token_hash: Buffer;
  user_id: string;
  account_id: string;
  email: string;
  /** The user's role now (read with the session on every request: a change applies at once). */
  role: Role;
  business_name: string | null;
  livemode: boolean;
  created_at: Date;
  last_seen_at: Date;
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest();
/** 256 random bits, URL-safe. */
export const newToken = (): string => randomBytes(32).toString('base64url');
export const newUserId = (): string => newId('usr');

export async function insertUser(sql: Db, accountId: string, email: string, role: Role = 'owner'): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    insert into dashboard_users (id, account_id, email, role) values (${newUserId()}, ${accountId}, ${email}, ${role})
    returning *`;
  return row!;
}

export async function findUserByEmail(sql: Db, accountId: string, email: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from dashboard_users where account_id = ${accountId} and lower(email) = lower(${email})`;
  return row ?? null;
}

/** Every user with this email that has a password (an email may be a user of several accounts). */
export async function usersForSignIn(sql: Db, email: string): Promise<UserRow[]> {
  return sql<UserRow[]>`
    select * from dashboard_users where lower(email) = lower(${email}) and password_hash is not null order by created_at limit 10`;
}

export async function listUsers(sql: Db, accountId: string): Promise<UserRow[]> {
  return sql<UserRow[]>`select * from dashboard_users where account_id = ${accountId} order by created_at, id limit 200`;
}

/** A one-time set-password token for the user; answers the token (only its hash is stored). */
export async function insertPasswordToken(sql: Db, userId: string, ttlSeconds: number): Promise<string> {
  const token = newToken();
  await sql`
    insert into dashboard_password_tokens (token_hash, user_id, expires_at)
    values (${hashToken(token)}, ${userId}, now() + make_interval(secs => ${ttlSeconds}))`;
  return token;
}

/** The user of an unused, unexpired set-password token, or null. */
export async function findPasswordToken(sql: Db, token: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`
    select u.* from dashboard_password_tokens t join dashboard_users u on u.id = t.user_id
    where t.token_hash = ${hashToken(token)} and t.used_at is null and t.expires_at > now()`;
  return row ?? null;
}

/**
 * Spends the token and sets the password, in one transaction: of two concurrent posts only one
 * finds the token unused. Every session of the user ends (a new password signs everyone out).
 */
export async function usePasswordToken(sql: Sql, token: string, passwordHash: string): Promise<UserRow | null> {
  return sql.begin(async (tx) => {
    const [spent] = await tx<{ user_id: string }[]>`
      update dashboard_password_tokens set used_at = now()
      where token_hash = ${hashToken(token)} and used_at is null and expires_at > now()
      returning user_id`;
    if (!spent) return null;
    const [user] = await tx<UserRow[]>`update dashboard_users set password_hash = ${passwordHash} where id = ${spent.user_id} returning *`;
    await tx`delete from dashboard_sessions where user_id = ${spent.user_id}`;
    return user ?? null;
  });
}

export async function insertSession(sql: Db, userId: string, livemode = false): Promise<string> {
  const token = newToken();
  await sql`insert into dashboard_sessions (token_hash, user_id, livemode) values (${hashToken(token)}, ${userId}, ${livemode})`;
  await sql`update dashboard_users set last_sign_in_at = now() where id = ${userId}`;
  return token;
}

/**
 * The live session of a token, its last_seen_at touched (at most once a minute); null when
 * unknown or past either limit (such a session is deleted).
 */
export async function findSession(sql: Db, token: string, idleSeconds: number, maxSeconds: number): Promise<SessionRow | null> {
  const hash = hashToken(token);
  const [row] = await sql<(SessionRow & { expired: boolean })[]>`
    select s.token_hash, s.user_id, u.account_id, u.email, u.role, a.business_name, s.livemode, s.created_at, s.last_seen_at,
      (s.last_seen_at < now() - make_interval(secs => ${idleSeconds}) or s.created_at < now() - make_interval(secs => ${maxSeconds})) as expired
    from dashboard_sessions s join dashboard_users u on u.id = s.user_id join accounts a on a.id = u.account_id
    where s.token_hash = ${hash}`;
  if (!row) return null;
  if (row.expired) {
    await deleteSession(sql, hash);
    return null;
  }
  if (Date.now() - row.last_seen_at.getTime() > 60_000) await sql`update dashboard_sessions set last_seen_at = now() where token_hash = ${hash}`;
  const { expired: _, ...session } = row;
  return session;
}

export async function deleteSession(sql: Db, tokenHash: Buffer): Promise<void> {
  await sql`delete from dashboard_sessions where token_hash = ${tokenHash}`;
}

export async function setSessionMode(sql: Db, tokenHash: Buffer, livemode: boolean): Promise<void> {
  await sql`update dashboard_sessions set livemode = ${livemode} where token_hash = ${tokenHash}`;
}

/**
 * The hourly clean-up (workers/maintenance.ts): sessions past either limit (a session is refused
 * as soon as it is past one; this only removes the rows nobody presents again), and set-password
 * links a day after they expired or were used. Returns how many rows went.
 */
export async function deleteEndedSessions(sql: Sql, idleSeconds: number, maxSeconds: number): Promise<number> {
  const sessions = await sql`
    delete from dashboard_sessions
    where last_seen_at < now() - make_interval(secs => ${idleSeconds}) or created_at < now() - make_interval(secs => ${maxSeconds})`;
  const tokens = await sql`
    delete from dashboard_password_tokens
    where expires_at < now() - interval '1 day' or used_at < now() - interval '1 day'`;
  return sessions.count + tokens.count;
}
