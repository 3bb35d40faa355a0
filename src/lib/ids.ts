import { randomBytes } from 'node:crypto';

// Crockford base32, lowercase: sorts byte-wise in the same order as the numbers it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_LEN = 10; // 48-bit millisecond timestamp
const RAND_LEN = 16; // 80 random bits

export const ID_PREFIXES = {
  account: 'acct',
  apiKey: 'key',
  customer: 'cus',
  paymentLink: 'pl',
  checkoutSession: 'cs',
  payment: 'pay',
  paymentIntent: 'pi',
  webhookEndpoint: 'we',
  event: 'evt',
  delivery: 'wd',
  request: 'req',
  view: 'plv',
} as const;
export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

let lastTime = -1;
const lastRand = new Uint8Array(RAND_LEN);

function encodeTime(ms: number): string {
  let out = '';
  for (let i = TIME_LEN - 1; i >= 0; i--) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function freshRandom(): void {
  const bytes = randomBytes(RAND_LEN);
  for (let i = 0; i < RAND_LEN; i++) lastRand[i] = bytes[i]! & 31;
}

/** Adds one to the random part; ids minted within one millisecond keep their order (ULID monotonic factory). */
function incrementRandom(): void {
  for (let i = RAND_LEN - 1; i >= 0; i--) {
    if (lastRand[i]! < 31) {
      lastRand[i]!++;
      return;
    }
    lastRand[i] = 0;
  }
  // 80 bits overflowed within one millisecond: borrow the next millisecond.
  lastTime++;
  freshRandom();
}

/** A prefixed, time-ordered id: `<prefix>_<10 chars of ms time><16 chars of randomness>`. */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    freshRandom();
  } else {
    incrementRandom();
  }
  let rand = '';
  for (let i = 0; i < RAND_LEN; i++) rand += ALPHABET[lastRand[i]!];
  return `${prefix}_${encodeTime(lastTime)}${rand}`;
}

const bodyPattern = `[${ALPHABET}]{${TIME_LEN + RAND_LEN}}`;
const patterns = new Map<string, RegExp>();

/** True when `value` has the exact shape of an id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  let re = patterns.get(prefix);
  if (!re) {
    re = new RegExp(`^${prefix}_${bodyPattern}$`);
    patterns.set(prefix, re);
  }
  return re.test(value);
}
