import { createHmac, timingSafeEqual } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signatureHeader } from '../../src/webhooks/signing.ts';

// Properties of the Service-Signature header (DESIGN 5): what any receiver following the README
// does (parse t and every v1, HMAC "t.body" with the whole secret) accepts what was signed and
// refuses anything changed. The seed is fixed so that a failure replays.
const SEED = 24;

/** A receiver's check, written from the README's description alone. */
function verify(header: string, body: string, secret: string, now: number, tolerance = 300): boolean {
  const pairs = header.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const);
  const ts = pairs.filter(([k]) => k === 't');
  if (ts.length !== 1 || !/^\d+$/.test(ts[0]![1])) return false;
  const t = Number(ts[0]![1]);
  if (Math.abs(now - t) > tolerance) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

const secret = fc.constant(null).map(() => newSigningSecret());
const body = fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'binary' }));
const t = fc.integer({ min: 1_000_000_000, max: 4_000_000_000 });

describe('Service-Signature', () => {
  it('when a body is signed with one or two secrets, then each secret verifies it, and the header has one t and one v1 per secret, newest first', () => {
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 2 }), body, t, (secrets, b, at) => {
        const header = signatureHeader(secrets, b, at);
        expect(header.split(',')).toHaveLength(1 + secrets.length);
        expect(header.startsWith(`t=${at},v1=`)).toBe(true);
        for (const s of secrets) expect(verify(header, b, s, at)).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('when the body, the time, the secret or a hex digit is changed, then verification fails', () => {
    fc.assert(
      fc.property(secret, secret, body, body, t, fc.integer({ min: 1, max: 10_000 }), fc.nat(), (s, other, b, otherBody, at, shift, pos) => {
        fc.pre(s !== other && b !== otherBody);
        const header = signatureHeader([s], b, at);
        expect(verify(header, otherBody, s, at)).toBe(false);
        expect(verify(header, b, other, at)).toBe(false);
        expect(verify(header.replace(`t=${at}`, `t=${at + shift}`), b, s, at + shift)).toBe(false);
        const hexAt = header.indexOf('v1=') + 3 + (pos % 64);
        const flipped = header.slice(0, hexAt) + (header[hexAt] === '0' ? '1' : '0') + header.slice(hexAt + 1);
        expect(verify(flipped, b, s, at)).toBe(false);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('when the signature is older or newer than the tolerance, then a receiver refuses it even though it is genuine', () => {
    fc.assert(
      fc.property(secret, body, t, fc.integer({ min: 301, max: 100_000 }), fc.boolean(), (s, b, at, skew, late) => {
        const header = signatureHeader([s], b, at);
        expect(verify(header, b, s, late ? at + skew : at - skew)).toBe(false);
        expect(verify(header, b, s, late ? at + 300 : at - 300)).toBe(true);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
