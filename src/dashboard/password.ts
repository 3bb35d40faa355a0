import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const argon2Async = promisify(argon2);

/** OWASP's argon2id minimum (19 MiB, 2 passes, 1 lane): about 20 ms a hash. */
const PARAMS = { memory: 19_456, passes: 2, parallelism: 1 } as const;
const TAG_LENGTH = 32;
const SALT_LENGTH = 16;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;

/** The problem with a chosen password, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `The password must be at least ${PASSWORD_MIN} characters long.`;
  if (password.length > PASSWORD_MAX) return `The password must be at most ${PASSWORD_MAX} characters long.`;
  return null;
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

/** An argon2id hash in PHC form: `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>` (base64, unpadded). */
export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(SALT_LENGTH);
  const tag = await argon2Async('argon2id', { message: password, nonce, tagLength: TAG_LENGTH, ...PARAMS });
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(nonce)}$${b64(tag)}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]{16,})\$([A-Za-z0-9+/]{16,})$/;

/** True when `password` matches the stored hash (compared in constant time); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  const tag = await argon2Async('argon2id', {
    message: password,
    nonce: Buffer.from(m[4]!, 'base64'),
    memory: Number(m[1]),
    passes: Number(m[2]),
    parallelism: Number(m[3]),
    tagLength: expected.length,
  });
  return tag.length === expected.length && timingSafeEqual(tag, expected);
}

/** A hash of a password nobody knows: verified against when no user matches, so both cases take the same time. */
let dummy: Promise<string> | undefined;
export const dummyHash = (): Promise<string> => (dummy ??= hashPassword(randomBytes(24).toString('base64')));
