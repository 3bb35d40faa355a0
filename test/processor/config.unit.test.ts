import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const LIVE = { STRIPE_SECRET_KEY: 'sk_live_abc', STRIPE_PUBLISHABLE_KEY: 'pk_live_abc', STRIPE_WEBHOOK_SECRET: 'whsec_abc' };

describe('Stripe settings', () => {
  it('when no Stripe setting is given, then both modes have no keys and the URLs are Stripe\'s', () => {
    expect(loadConfig({}).stripe).toEqual({ live: null, test: null, apiUrl: 'https://api.stripe.com', jsUrl: 'https://js.stripe.com/v3/', defaultUrls: true });
  });

  it('when the three live settings are given, then live has its keys; empty test settings count as unset', () => {
    const c = loadConfig({ ...LIVE, STRIPE_TEST_SECRET_KEY: '', STRIPE_API_URL: 'http://127.0.0.1:9999/' });
    expect(c.stripe.live).toEqual({ secretKey: 'sk_live_abc', publishableKey: 'pk_live_abc', webhookSecret: 'whsec_abc' });
    expect(c.stripe.test).toBeNull();
    expect(c.stripe.apiUrl).toBe('http://127.0.0.1:9999');
  });

  it('when only some settings of a mode are given, then start-up fails naming the missing ones and no value', () => {
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_live_abc' })).toThrow(/STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET: live Stripe keys come together/);
    expect(() => loadConfig({ STRIPE_TEST_WEBHOOK_SECRET: 'whsec_x' })).toThrow(/STRIPE_TEST_SECRET_KEY, STRIPE_TEST_PUBLISHABLE_KEY/);
  });

  it('when a key of the wrong mode or shape is given, then start-up fails without echoing it', () => {
    let message = '';
    try {
      loadConfig({ ...LIVE, STRIPE_SECRET_KEY: 'sk_test_secretvalue' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/STRIPE_SECRET_KEY: must be a live secret key/);
    expect(message).not.toContain('secretvalue');
  });
});
