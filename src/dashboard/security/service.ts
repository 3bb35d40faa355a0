import type { Sql } from '../../db/sql.ts';
import { recordAudit, type AuditActor } from '../../audit/store.ts';
import { can } from '../../team/roles.ts';
import {
  disableTotp,
  enableTotp,
  endSessionsWithoutSecondFactor,
  findFactors,
  hasSecondFactor,
  replaceRecoveryCodes,
  setRequireTwoFactor,
  startTotp,
  takeTotpStep,
  totpSecretOf,
  useRecoveryCode,
} from './store.ts';
import { checkTotp, newRecoveryCodes, newTotpSecret, normaliseCode, RECOVERY_CODE, TOTP_CODE, totpUri } from './totp.ts';

/**
 * The two-factor rules (issue 25, point 3), shared by the security page and the sign-in's second
 * step. Every change and its audit event commit together (DESIGN 13); a secret or a code is never
 * written to the audit log or the log.
 */

/** Who acts: the signed-in user (or the user between password and second factor) and their address. */
export interface UserActor {
  userId: string;
  accountId: string;
  email: string;
  ip: string | null;
}

export const auditActor = (a: UserActor): AuditActor => ({ type: 'user', id: a.userId, label: a.email, ip: a.ip });
const userObject = (a: UserActor) => ({ type: 'dashboard_user', id: a.userId });

export type SecondFactorResult = { ok: true; method: 'totp' | 'recovery_code' } | { ok: false };

/**
 * A code typed at the second step (or to turn TOTP off): six digits are a TOTP code, taken once
 * (a replay within its window is refused); anything else is tried as an unused recovery code,
 * spent with its audit event.
 */
export async function checkSecondFactor(sql: Sql, actor: UserActor, input: string): Promise<SecondFactorResult> {
  const code = normaliseCode(input);
  if (TOTP_CODE.test(code)) {
    const totp = await totpSecretOf(sql, actor.userId, false);
    if (!totp) return { ok: false };
    const step = await checkTotp(totp.secret, code, totp.last_step);
    if (step === null || !(await takeTotpStep(sql, actor.userId, step))) return { ok: false };
    return { ok: true, method: 'totp' };
  }
  if (!RECOVERY_CODE.test(code)) return { ok: false };
  const used = await sql.begin(async (tx) => {
    if (!(await useRecoveryCode(tx, actor.userId, code))) return false;
    await recordAudit(tx, { accountId: actor.accountId, livemode: null, actor: auditActor(actor), action: 'user.recovery_code_used', object: userObject(actor) });
    return true;
  });
  return used ? { ok: true, method: 'recovery_code' } : { ok: false };
}

/** A new TOTP enrolment: the secret (to show once) and its otpauth:// URI; null while TOTP is on. */
export async function beginTotp(sql: Sql, actor: UserActor, issuer: string): Promise<{ secret: string; uri: string } | null> {
  const secret = newTotpSecret();
  if (!(await startTotp(sql, actor.userId, secret))) return null;
  return { secret, uri: totpUri(issuer, actor.email, secret) };
}

/**
 * The first code of an enrolment: TOTP is on, ten recovery codes replace any earlier ones, and
 * `user.two_factor_enabled` is recorded, in one transaction. Answers the codes (to show once), or
 * null for a wrong code or no enrolment waiting.
 */
export async function confirmTotp(sql: Sql, actor: UserActor, input: string): Promise<string[] | null> {
  const pending = await totpSecretOf(sql, actor.userId, true);
  if (!pending) return null;
  const step = await checkTotp(pending.secret, normaliseCode(input), pending.last_step);
  if (step === null) return null;
  const codes = newRecoveryCodes();
  const done = await sql.begin(async (tx) => {
    if (!(await takeTotpStep(tx, actor.userId, step)) || !(await enableTotp(tx, actor.userId))) return false;
    await replaceRecoveryCodes(tx, actor.userId, codes);
    await recordAudit(tx, { accountId: actor.accountId, livemode: null, actor: auditActor(actor), action: 'user.two_factor_enabled', object: userObject(actor), data: { method: 'totp' } });
    return true;
  });
  return done ? codes : null;
}

export type ChangeResult = { ok: true } | { ok: false; problem: string; param: string; forbidden?: true };

/**
 * TOTP off, proven with a current code or a recovery code. Refused while the account requires
 * two-factor and TOTP is the user's only factor.
 */
export async function turnOffTotp(sql: Sql, actor: UserActor, input: string): Promise<ChangeResult> {
  const f = await findFactors(sql, actor.userId);
  if (!f?.totp_enabled) return { ok: false, problem: 'The authenticator app is not set up.', param: 'code' };
  if (f.require_two_factor && f.passkeys === 0) {
    return { ok: false, problem: 'This account requires two-factor sign-in: add a passkey before you turn the authenticator app off.', param: 'code' };
  }
  if (!(await checkSecondFactor(sql, actor, input)).ok) return { ok: false, problem: 'That code is not right, or was used already. Enter the code your app shows now.', param: 'code' };
  await sql.begin(async (tx) => {
    if (!(await disableTotp(tx, actor.userId))) return;
    await recordAudit(tx, { accountId: actor.accountId, livemode: null, actor: auditActor(actor), action: 'user.two_factor_disabled', object: userObject(actor), data: { method: 'totp' } });
  });
  return { ok: true };
}

/** Ten new recovery codes replace the user's (to show once); null without TOTP. */
export async function renewRecoveryCodes(sql: Sql, actor: UserActor): Promise<string[] | null> {
  const codes = newRecoveryCodes();
  const done = await sql.begin(async (tx) => {
    const [on] = await tx`select 1 from dashboard_users where id = ${actor.userId} and totp_enabled_at is not null for update`;
    if (!on) return false;
    await replaceRecoveryCodes(tx, actor.userId, codes);
    await recordAudit(tx, { accountId: actor.accountId, livemode: null, actor: auditActor(actor), action: 'user.recovery_codes_regenerated', object: userObject(actor) });
    return true;
  });
  return done ? codes : null;
}

/**
 * "Require two-factor for every user", asked by a user whose role may manage the team. Turning it
 * on asks the user to have a second factor first (they would be sent to enrol at their next
 * sign-in otherwise), and ends the sessions of the users without one but `keep` (theirs): each is
 * sent to enrol after their password. Recorded as `account.two_factor_requirement_updated`.
 */
export async function setRequirement(sql: Sql, actor: UserActor, required: boolean, keep: Buffer): Promise<ChangeResult & { ended?: number }> {
  const f = await findFactors(sql, actor.userId);
  if (!f || !can(f.role, 'team.manage')) return { ok: false, problem: 'Only an owner or an administrator can change this.', param: 'required', forbidden: true };
  if (required && !hasSecondFactor(f)) return { ok: false, problem: 'Set up an authenticator app or a passkey for yourself first.', param: 'required' };
  const ended = await sql.begin(async (tx) => {
    await tx`select 1 from accounts where id = ${actor.accountId} for update`;
    if (!(await setRequireTwoFactor(tx, actor.accountId, required))) return 0;
    const n = required ? await endSessionsWithoutSecondFactor(tx, actor.accountId, keep) : 0;
    await recordAudit(tx, {
      accountId: actor.accountId,
      livemode: null,
      actor: auditActor(actor),
      action: 'account.two_factor_requirement_updated',
      object: { type: 'account', id: actor.accountId },
      data: { require_two_factor: required, sessions_ended: n },
    });
    return n;
  });
  return { ok: true, ended };
}
