import type { Db } from '../db/sql.ts';
import type { Role } from './roles.ts';

/** A member of an account's team as the Team page lists them; the password hash never leaves the store. */
export interface MemberRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  has_password: boolean;
  created_at: Date;
  last_sign_in_at: Date | null;
}

export async function listMembers(sql: Db, accountId: string): Promise<MemberRow[]> {
  return sql<MemberRow[]>`
    select id, account_id, email, role, password_hash is not null as has_password, created_at, last_sign_in_at
    from dashboard_users where account_id = ${accountId} order by created_at, id limit 200`;
}

export async function findMember(sql: Db, accountId: string, userId: string): Promise<MemberRow | null> {
  const [row] = await sql<MemberRow[]>`
    select id, account_id, email, role, password_hash is not null as has_password, created_at, last_sign_in_at
    from dashboard_users where account_id = ${accountId} and id = ${userId}`;
  return row ?? null;
}

/**
 * Locks the account's team for a change of roles or members: every such change takes this lock
 * first, so two owners demoting each other run one after the other and the second sees one owner.
 */
export async function lockTeam(sql: Db, accountId: string): Promise<void> {
  await sql`select 1 from accounts where id = ${accountId} for update`;
}

export async function countOwners(sql: Db, accountId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from dashboard_users where account_id = ${accountId} and role = 'owner'`;
  return row!.n;
}

export async function setRole(sql: Db, accountId: string, userId: string, role: Role): Promise<void> {
  await sql`update dashboard_users set role = ${role} where account_id = ${accountId} and id = ${userId}`;
}

/** Deletes the user: their sessions and set-password links go with them (on delete cascade). */
export async function deleteMember(sql: Db, accountId: string, userId: string): Promise<void> {
  await sql`delete from dashboard_users where account_id = ${accountId} and id = ${userId}`;
}

/** The support role's refund limits, per currency in minor units (lowercase ISO codes). */
export type RefundLimits = Record<string, number>;

export async function getRefundLimits(sql: Db, accountId: string): Promise<RefundLimits> {
  const [row] = await sql<{ limits: RefundLimits }[]>`select support_refund_limits as limits from accounts where id = ${accountId}`;
  return row?.limits ?? {};
}

/** Sets (or, with null, removes) the limit of one currency. */
export async function setRefundLimit(sql: Db, accountId: string, currency: string, amount: number | null): Promise<void> {
  if (amount === null) {
    await sql`update accounts set support_refund_limits = support_refund_limits - ${currency}::text where id = ${accountId}`;
  } else {
    await sql`update accounts set support_refund_limits = support_refund_limits || jsonb_build_object(${currency}::text, ${amount}::bigint) where id = ${accountId}`;
  }
}
