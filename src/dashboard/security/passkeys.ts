import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod';
import { recordAudit } from '../../audit/store.ts';
import type { Sql } from '../../db/sql.ts';
import { deletePasskey, findFactors, findPasskey, insertChallenge, insertPasskey, listPasskeys, takeChallenge, usePasskey } from './store.ts';
import { auditActor, type ChangeResult, type UserActor } from './service.ts';

/** @simplewebauthn/server (with its ASN.1 and X.509 packages, about 700 modules): loaded with the first passkey, not at start. */
const webauthn = () => import('@simplewebauthn/server');

/**
 * Passkeys (WebAuthn) through @simplewebauthn/server, as a second factor after the password. The
 * relying party is the service's public address (PUBLIC_BASE_URL): its host is the rpID, its
 * origin the only origin accepted. Challenges are kept in Postgres, each taken once.
 */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(publicBaseUrl: string, name: string): RelyingParty {
  const url = new URL(publicBaseUrl);
  return { id: url.hostname, origin: url.origin, name };
}

const CHALLENGE_SECONDS = 300;
/** Passkeys per user: enough for every device and a spare key or two; the table stays bounded. */
export const MAX_PASSKEYS = 20;
const TIMEOUT_MS = 120_000;

const b64url = z.string().regex(/^[A-Za-z0-9_-]*={0,2}$/).max(16_384);
const Extensions = z.record(z.string(), z.unknown());
const Attachment = z.enum(['platform', 'cross-platform']).optional();
const Transports = z.array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])).max(8).optional();

/** What every credential the browser posts carries (the JSON of @simplewebauthn/browser). */
const Credential = z.object({
  id: b64url.min(1).max(1024),
  rawId: b64url.min(1).max(1024),
  type: z.literal('public-key'),
  authenticatorAttachment: Attachment,
  clientExtensionResults: Extensions,
});

/** What the browser posts after creating a passkey. */
const RegistrationResponse = Credential.extend({
  response: z.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    authenticatorData: b64url.optional(),
    transports: Transports,
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64url.optional(),
  }),
});

/** What the browser posts after signing in with a passkey. */
const AuthenticationResponse = Credential.extend({
  response: z.object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.optional(),
  }),
});

/** A form field holding the browser's JSON, checked against its schema; null when it is not one. */
function parseCredential<T extends z.ZodType>(schema: T, field: string): z.infer<T> | null {
  let json: unknown;
  try {
    json = JSON.parse(field);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

export const PASSKEY_NAME = z.string().trim().min(1).max(60);

/** Options for creating a passkey of the user; its challenge is kept for the answer. */
export async function registrationOptions(sql: Sql, rp: RelyingParty, actor: UserActor): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await listPasskeys(sql, actor.userId);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: actor.email,
    userID: new TextEncoder().encode(actor.userId),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await insertChallenge(sql, actor.userId, 'register', options.challenge, CHALLENGE_SECONDS);
  return options;
}

/**
 * The browser's answer to registrationOptions: verified against a challenge handed to this user
 * (taken once), the rpID and the origin, then stored with `user.passkey_added` in one transaction.
 */
export async function addPasskey(sql: Sql, rp: RelyingParty, actor: UserActor, credentialField: string, rawName: string): Promise<ChangeResult> {
  const name = PASSKEY_NAME.safeParse(rawName);
  if (!name.success) return { ok: false, problem: 'Give the passkey a name of up to 60 characters, such as “Work laptop”.', param: 'name' };
  const response = parseCredential(RegistrationResponse, credentialField);
  if (!response) return { ok: false, problem: 'The passkey could not be read. Try again.', param: 'credential' };
  if ((await findFactors(sql, actor.userId))!.passkeys >= MAX_PASSKEYS) {
    return { ok: false, problem: `You have ${MAX_PASSKEYS} passkeys already: remove one before you add another.`, param: 'credential' };
  }
  const { verifyRegistrationResponse } = await webauthn();
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: (c) => takeChallenge(sql, actor.userId, 'register', c),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch {
    return { ok: false, problem: 'The passkey could not be verified. Try again.', param: 'credential' };
  }
  if (!verified.verified) return { ok: false, problem: 'The passkey could not be verified. Try again.', param: 'credential' };
  const c = verified.registrationInfo.credential;
  const added = await sql.begin(async (tx) => {
    const row = await insertPasskey(tx, {
      userId: actor.userId,
      credentialId: c.id,
      publicKey: c.publicKey,
      counter: c.counter,
      transports: c.transports ?? [],
      name: name.data,
    });
    if (!row) return false;
    await auditPasskey(tx, actor, 'user.passkey_added', row);
    return true;
  });
  return added ? { ok: true } : { ok: false, problem: 'This passkey is already registered.', param: 'credential' };
}

/** The audit record of a passkey added or removed, on the transaction of the change. */
const auditPasskey = (sql: Parameters<typeof recordAudit>[0], actor: UserActor, action: 'user.passkey_added' | 'user.passkey_removed', row: { id: string; name: string }) =>
  recordAudit(sql, { accountId: actor.accountId, livemode: null, actor: auditActor(actor), action, object: { type: 'passkey', id: row.id }, data: { name: row.name } });

/** Removes one of the user's passkeys; refused when it is their last factor and the account requires two-factor. */
export async function removePasskey(sql: Sql, actor: UserActor, id: string): Promise<ChangeResult> {
  const f = await findFactors(sql, actor.userId);
  if (f?.require_two_factor && !f.totp_enabled && f.passkeys <= 1) {
    return { ok: false, problem: 'This account requires two-factor sign-in: set up another passkey or an authenticator app before you remove this one.', param: 'id' };
  }
  const removed = await sql.begin(async (tx) => {
    const row = await deletePasskey(tx, actor.userId, id);
    if (!row) return false;
    await auditPasskey(tx, actor, 'user.passkey_removed', row);
    return true;
  });
  return removed ? { ok: true } : { ok: false, problem: 'No such passkey.', param: 'id' };
}

/** Options for signing in with one of the user's passkeys; null when they have none. */
export async function authenticationOptions(sql: Sql, rp: RelyingParty, userId: string): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const passkeys = await listPasskeys(sql, userId);
  if (!passkeys.length) return null;
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: 'preferred',
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: p.transports })),
  });
  await insertChallenge(sql, userId, 'authenticate', options.challenge, CHALLENGE_SECONDS);
  return options;
}

/** The browser's answer at the second step: one of the user's passkeys signed a challenge handed to them. */
export async function checkPasskey(sql: Sql, rp: RelyingParty, userId: string, credentialField: string): Promise<boolean> {
  const response = parseCredential(AuthenticationResponse, credentialField);
  if (!response) return false;
  const passkey = await findPasskey(sql, userId, response.id);
  if (!passkey) return false;
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const result = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: (c) => takeChallenge(sql, userId, 'authenticate', c),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: Number(passkey.counter), transports: passkey.transports },
      requireUserVerification: false,
    });
    return result.verified && (await usePasskey(sql, passkey.id, result.authenticationInfo.newCounter));
  } catch {
    return false;
  }
}
