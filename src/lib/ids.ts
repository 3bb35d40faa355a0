import { randomView } from './random.ts';

// Crockford base32, lowercase: sorts byte-wise in the same order as the numbers it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_LEN = 10; // 48-bit millisecond timestamp
const SEQ_LEN = 3; // 15-bit count of ids minted earlier in the same millisecond by this process
const RAND_LEN = 16; // 80 fresh random bits, new for every id
const SEQ_MAX = 32 ** SEQ_LEN - 1;
/** Ids minted before issue 9: time then 80 bits that a ULID monotonic factory incremented within a millisecond. */
const LEGACY_LEN = TIME_LEN + RAND_LEN;

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
  refund: 're',
  dispute: 'dp',
  invoice: 'in',
  email: 'em',
  dashboardUser: 'usr',
  installmentPlan: 'ip',
  cardSetup: 'seti',
  paymentMethod: 'pm',
  auditEvent: 'aud',
  passkey: 'pky',
  fraudRule: 'frl',
  fraudListItem: 'fli',
  exportRun: 'exr',
} as const;
export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

let lastTime = -1;
let seq = 0;

function encode(n: number, len: number): string {
  let out = '';
  for (let i = 0; i < len; i++) {
    out = ALPHABET[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return out;
}

function freshRandom(): string {
  // 256 is a multiple of 32, so each masked byte is a uniform base-32 digit.
  const bytes = randomView(RAND_LEN);
  let out = '';
  for (let i = 0; i < RAND_LEN; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

/**
 * A prefixed, time-ordered id: `<prefix>_<10 chars of ms time><3 chars of sequence><16 chars of randomness>`.
 * Ids minted within one millisecond are ordered by the sequence, never by the random part: a checkout
 * session id is the only credential of its hosted page, so its neighbours must not be derivable from it.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    seq = 0;
  } else if (seq < SEQ_MAX) {
    seq++; // same millisecond, or the clock stepped back: keep counting from where we are
  } else {
    // 32,768 ids within one millisecond: borrow the next one.
    lastTime++;
    seq = 0;
  }
  return `${prefix}_${encode(lastTime, TIME_LEN)}${encode(seq, SEQ_LEN)}${freshRandom()}`;
}

/**
 * The lowest id of `prefix` for the millisecond `ms`: every id minted at `ms` or later sorts after it,
 * every id minted earlier before it. A list cursor (`ending_before`) meaning "from this moment on";
 * cursors are only compared, so it need not be the id of a row.
 */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encode(Math.max(0, Math.floor(ms)), TIME_LEN)}${'0'.repeat(SEQ_LEN + RAND_LEN)}`;
}

/**
 * The millisecond an id was minted at (its time part): the inverse of `idFloor`. The partition of a
 * time-ordered table that holds an id, and the earliest partition where rows made after it can be.
 */
export function idTime(id: string): number {
  const body = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 1 + TIME_LEN);
  let ms = 0;
  for (const ch of body) ms = ms * 32 + ALPHABET.indexOf(ch);
  return ms;
}

const bodyPattern = `[${ALPHABET}]{${LEGACY_LEN}}(?:[${ALPHABET}]{${SEQ_LEN}})?`;
const patterns = new Map<string, RegExp>();

/** True when `value` has the exact shape of an id with this prefix (current ids, or the shorter ones minted before issue 9). */
export function isId(prefix: IdPrefix, value: string): boolean {
  let re = patterns.get(prefix);
  if (!re) {
    re = new RegExp(`^${prefix}_${bodyPattern}$`);
    patterns.set(prefix, re);
  }
  return re.test(value);
}
