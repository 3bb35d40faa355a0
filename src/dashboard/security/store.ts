import type { Db, Sql } from '../../db/sql.ts';
import { newId } from '../../lib/ids.ts';
import type { Role } from '../../team/roles.ts';
import { hashToken, newToken } from '../store.ts';

/** What the second step and the security page know of a user's factors (never the TOTP secret). */
export interface FactorsRow {
  user_id: string;
  account_id: string;
  email: string;
  role: Role;
  totp_enabled: boolean;
  /** An enrolment started and not yet confirmed with a code. */
  totp_pending: boolean;
  recovery_codes_left: number;
  passkeys: number;
  require_two_factor: boolean;
  business_name: string | null;
}

export async function findFactors(sql: Db, userId: string): Promise<FactorsRow | null> {
  const [row] = await sql<FactorsRow[]>`
    select u.id as user_id, u.account_id, u.email, u.role,
      u.totp_enabled_at is not null as totp_enabled,
      u.totp_secret is not null and u.totp_enabled_at is null as totp_pending,
      (select count(*)::int from dashboard_recovery_codes c where c.user_id = u.id and c.used_at is null) as recovery_codes_left,
      (select count(*)::int from dashboard_passkeys p where p.user_id = u.id) as passkeys,
      a.require_two_factor, a.business_name
    from dashboard_users u join accounts a on a.id = u.account_id
    where u.id = ${userId}`;
  return row ?? null;
}

export const hasSecondFactor = (f: Pick<FactorsRow, 'totp_enabled' | 'passkeys'>): boolean => f.totp_enabled || f.passkeys > 0;

// ---- TOTP

/** A new enrolment: the secret replaces an unconfirmed one; refused (null) while TOTP is on. */
export async function startTotp(sql: Db, userId: string, secret: string): Promise<boolean> {
  const rows = await sql`
    update dashboard_users set totp_secret = ${secret}, totp_enabled_at = null, totp_last_step = null
    where id = ${userId} and totp_enabled_at is null`;
  return rows.count === 1;
}

/** The secret a code is checked against: the confirmed one, or (`pending`) the one waiting for its first code. */
export async function totpSecretOf(sql: Db, userId: string, pending: boolean): Promise<{ secret: string; last_step: number | null } | null> {
  const [row] = await sql<{ secret: string; last_step: string | null }[]>`
    select totp_secret as secret, totp_last_step::text as last_step from dashboard_users
    where id = ${userId} and totp_secret is not null and (totp_enabled_at is null) = ${pending}`;
  return row ? { secret: row.secret, last_step: row.last_step === null ? null : Number(row.last_step) } : null;
}

/**
 * Takes the time step of an accepted code, once: false when that step (or a later one) was taken
 * already, by a replay or a concurrent sign-in with the same code.
 */
export async function takeTotpStep(sql: Db, userId: string, step: number): Promise<boolean> {
  const rows = await sql`
    update dashboard_users set totp_last_step = ${step}
    where id = ${userId} and totp_secret is not null and (totp_last_step is null or totp_last_step < ${step})`;
  return rows.count === 1;
}

export async function enableTotp(sql: Db, userId: string): Promise<boolean> {
  const rows = await sql`update dashboard_users set totp_enabled_at = now() where id = ${userId} and totp_secret is not null and totp_enabled_at is null`;
  return rows.count === 1;
}

/** TOTP off: the secret and the recovery codes go. */
export async function disableTotp(sql: Db, userId: string): Promise<boolean> {
  const rows = await sql`update dashboard_users set totp_secret = null, totp_enabled_at = null, totp_last_step = null where id = ${userId} and totp_secret is not null`;
  await sql`delete from dashboard_recovery_codes where user_id = ${userId}`;
  return rows.count === 1;
}

// ---- Recovery codes

/** The user's recovery codes replaced by these (hashed here). */
export async function replaceRecoveryCodes(sql: Db, userId: string, codes: string[]): Promise<void> {
  await sql`delete from dashboard_recovery_codes where user_id = ${userId}`;
  await sql`
    insert into dashboard_recovery_codes (user_id, code_hash)
    select ${userId}, decode(h, 'hex') from unnest(${codes.map((c) => hashToken(c).toString('hex'))}::text[]) as h`;
}

/** Spends an unused recovery code (already normalised); false when it is not one or was used. */
export async function useRecoveryCode(sql: Db, userId: string, code: string): Promise<boolean> {
  const rows = await sql`
    update dashboard_recovery_codes set used_at = now()
    where user_id = ${userId} and code_hash = ${hashToken(code)} and used_at is null`;
  return rows.count === 1;
}

// ---- Passkeys

export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export async function listPasskeys(sql: Db, userId: string): Promise<PasskeyRow[]> {
  return sql<PasskeyRow[]>`select * from dashboard_passkeys where user_id = ${userId} order by created_at, id limit 50`;
}

export async function findPasskey(sql: Db, userId: string, credentialId: string): Promise<PasskeyRow | null> {
  const [row] = await sql<PasskeyRow[]>`select * from dashboard_passkeys where user_id = ${userId} and credential_id = ${credentialId}`;
  return row ?? null;
}

export async function insertPasskey(
  sql: Db,
  p: { userId: string; credentialId: string; publicKey: Uint8Array; counter: number; transports: string[]; name: string },
): Promise<PasskeyRow | null> {
  const [row] = await sql<PasskeyRow[]>`
    insert into dashboard_passkeys (id, user_id, credential_id, public_key, counter, transports, name)
    values (${newId('pky')}, ${p.userId}, ${p.credentialId}, ${Buffer.from(p.publicKey)}, ${p.counter}, ${p.transports}, ${p.name})
    on conflict (credential_id) do nothing
    returning *`;
  return row ?? null;
}

/** A sign-in with the passkey: its signature counter (refused when it did not grow, for an authenticator that counts). */
export async function usePasskey(sql: Db, id: string, counter: number): Promise<boolean> {
  const rows = await sql`
    update dashboard_passkeys set counter = ${counter}, last_used_at = now()
    where id = ${id} and (${counter} = 0 or counter < ${counter})`;
  return rows.count === 1;
}

export async function deletePasskey(sql: Db, userId: string, id: string): Promise<PasskeyRow | null> {
  const [row] = await sql<PasskeyRow[]>`delete from dashboard_passkeys where user_id = ${userId} and id = ${id} returning *`;
  return row ?? null;
}

// ---- WebAuthn challenges

export type ChallengePurpose = 'register' | 'authenticate';

export async function insertChallenge(sql: Db, userId: string, purpose: ChallengePurpose, challenge: string, ttlSeconds: number): Promise<void> {
  await sql`
    insert into dashboard_webauthn_challenges (challenge, user_id, purpose, expires_at)
    values (${challenge}, ${userId}, ${purpose}, now() + make_interval(secs => ${ttlSeconds}))`;
}

/** Takes a challenge of the user, once: false when unknown, another user's, expired or taken. */
export async function takeChallenge(sql: Db, userId: string, purpose: ChallengePurpose, challenge: string): Promise<boolean> {
  const rows = await sql`
    delete from dashboard_webauthn_challenges
    where challenge = ${challenge} and user_id = ${userId} and purpose = ${purpose} and expires_at > now()`;
  return rows.count === 1;
}

// ---- The step between the password and the second factor

export type StepPurpose = 'verify' | 'enrol';

export interface StepRow {
  token_hash: Buffer;
  user_id: string;
  purpose: StepPurpose;
  failures: number;
}

/** A new step for the user (their earlier ones end); answers its token (only the hash is stored). */
export async function insertStep(sql: Sql, userId: string, purpose: StepPurpose, ttlSeconds: number): Promise<string> {
  const token = newToken();
  await sql.begin(async (tx) => {
    await tx`delete from dashboard_sign_in_steps where user_id = ${userId}`;
    await tx`
      insert into dashboard_sign_in_steps (token_hash, user_id, purpose, expires_at)
      values (${hashToken(token)}, ${userId}, ${purpose}, now() + make_interval(secs => ${ttlSeconds}))`;
  });
  return token;
}

export async function findStep(sql: Db, token: string): Promise<StepRow | null> {
  const [row] = await sql<StepRow[]>`
    select token_hash, user_id, purpose, failures from dashboard_sign_in_steps
    where token_hash = ${hashToken(token)} and expires_at > now()`;
  return row ?? null;
}

/** A wrong code in the step; at `max` failures the step ends (back to the password). Answers the failures. */
export async function stepFailed(sql: Db, tokenHash: Buffer, max: number): Promise<number> {
  const [row] = await sql<{ failures: number }[]>`
    update dashboard_sign_in_steps set failures = failures + 1 where token_hash = ${tokenHash} returning failures`;
  const failures = row?.failures ?? max;
  if (failures >= max) await deleteStep(sql, tokenHash);
  return failures;
}

/** Ends the step; true when it was still there (only one of two concurrent answers gets the session). */
export async function deleteStep(sql: Db, tokenHash: Buffer): Promise<boolean> {
  const rows = await sql`delete from dashboard_sign_in_steps where token_hash = ${tokenHash}`;
  return rows.count === 1;
}

// ---- The account's requirement

export async function setRequireTwoFactor(sql: Db, accountId: string, required: boolean): Promise<boolean> {
  const rows = await sql`update accounts set require_two_factor = ${required} where id = ${accountId} and require_two_factor <> ${required}`;
  return rows.count === 1;
}

/** The sessions of the account's users without a second factor end (the requirement was just turned on), but `keep`. */
export async function endSessionsWithoutSecondFactor(sql: Db, accountId: string, keep: Buffer): Promise<number> {
  const rows = await sql`
    delete from dashboard_sessions s using dashboard_users u
    where u.id = s.user_id and u.account_id = ${accountId} and s.token_hash <> ${keep}
      and u.totp_enabled_at is null and not exists (select 1 from dashboard_passkeys p where p.user_id = u.id)`;
  return rows.count;
}

/** The hourly clean-up (workers/maintenance.ts): steps and challenges past their time. */
export async function deleteEndedSteps(sql: Sql): Promise<number> {
  const steps = await sql`delete from dashboard_sign_in_steps where expires_at < now()`;
  const challenges = await sql`delete from dashboard_webauthn_challenges where expires_at < now()`;
  return steps.count + challenges.count;
}
