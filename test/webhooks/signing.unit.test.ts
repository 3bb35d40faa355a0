import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signatureHeader } from '../../src/webhooks/signing.ts';

// The README's contract: `t=<unix seconds>,v1=<hex>`, v1 the lowercase hex HMAC-SHA256 keyed by the
// whole `whsec_…` string over "<t>.<raw body>"; two v1 entries during a rotation, the new one first.
const body = '{"id":"evt_1","type":"payment.succeeded"}';
const hmac = (secret: string, t: number, b: string) => createHmac('sha256', secret).update(`${t}.${b}`).digest('hex');

describe('signatureHeader', () => {
  it('when one secret signs, then the header is t=…,v1=<HMAC of "t.body">', () => {
    const secret = 'whsec_test';
    expect(signatureHeader([secret], body, 1_700_000_000)).toBe(`t=1700000000,v1=${hmac(secret, 1_700_000_000, body)}`);
  });

  it('when two secrets sign (rotation), then there are two v1 entries in the order given', () => {
    const header = signatureHeader(['whsec_new', 'whsec_old'], body, 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${hmac('whsec_new', 1_700_000_000, body)},v1=${hmac('whsec_old', 1_700_000_000, body)}`);
  });

  it('when a third-party verifier (stripe-node) checks the header, then it accepts each secret and refuses a changed body', () => {
    const stripe = new Stripe('sk_test_unused');
    const now = Math.floor(Date.now() / 1000);
    const header = signatureHeader(['whsec_new', 'whsec_old'], body, now);
    expect(() => stripe.webhooks.constructEvent(body, header, 'whsec_new', 300)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, 'whsec_old', 300)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, 'whsec_other', 300)).toThrow();
    expect(() => stripe.webhooks.constructEvent(body.replace('succeeded', 'failed'), header, 'whsec_new', 300)).toThrow();
  });

  it('when a signing secret is made, then it is whsec_ and 43 base64url characters, different each time', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});
