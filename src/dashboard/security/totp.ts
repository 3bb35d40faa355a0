import { randomInt } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';

/**
 * TOTP (RFC 6238: SHA-1, 6 digits, 30 s, what every authenticator app reads from an otpauth://
 * URI) through otplib, and the recovery codes. Pure: the store keeps the secret and the last step.
 */

/** A code typed one step early or late (a phone's clock off by up to 30 s) is still taken. */
const TOLERANCE_SECONDS = 30;

export const newTotpSecret = (): string => generateSecret({ length: 20 });

/** What an authenticator app scans or is given: the issuer is the business, the label the user's email. */
export const totpUri = (issuer: string, email: string, secret: string): string => generateURI({ issuer, label: email, secret });

/** Six digits, whatever spaces the user typed between them. */
export const TOTP_CODE = /^\d{6}$/;

/** The code as typed, without spaces and dashes, lowercase: a TOTP code or a recovery code. */
export const normaliseCode = (input: string): string => input.replace(/[\s-]/g, '').toLowerCase().slice(0, 64);

/**
 * The time step of a right code, or null. `afterStep`: the last step taken; a code of it or an
 * earlier step is refused (a replayed code), as otplib's afterTimeStep does.
 */
export async function checkTotp(secret: string, code: string, afterStep: number | null, epochSeconds = Math.floor(Date.now() / 1000)): Promise<number | null> {
  if (!TOTP_CODE.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: epochSeconds,
    epochTolerance: TOLERANCE_SECONDS,
    ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

// Recovery codes: 12 characters of a lowercase alphabet without look-alikes (31^12: about 59 bits), shown as xxxx-xxxx-xxxx.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODES = 10;
export const RECOVERY_CODE = /^[a-z2-9]{12}$/;

/** Ten fresh recovery codes, normalised (no dashes); `formatRecoveryCode` shows one. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => Array.from({ length: 12 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join(''));
}

export const formatRecoveryCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
