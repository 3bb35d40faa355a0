import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { configReadiness, productionChecks } from '../../src/ops/production-checks.ts';
import { runScript } from '../helpers/process.ts';
import { startTestServer, useTestServer } from '../helpers/server.ts';

// Issue 22, point 7: which production settings are missing, from `npm run check` and GET /readyz.
// Readiness itself stays "Postgres and Redis answer": a missing setting is reported, never a 503.

const t = useTestServer();

/** Everything the checklist asks for, as a deployment sets it. */
const PRODUCTION = {
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://pay.example.com',
  SMTP_URL: 'smtp://mailer:secret-password@mail.example.com:587',
  EMAIL_FROM: 'receipts@pay.example.com',
  STRIPE_SECRET_KEY: 'sk_live_abc',
  STRIPE_PUBLISHABLE_KEY: 'pk_live_abc',
  STRIPE_WEBHOOK_SECRET: 'whsec_abc',
  TRUST_PROXY: '1',
  ADMIN_USER: 'ops',
  ADMIN_PASSWORD: 'admin-secret',
};

describe('the production checklist', () => {
  it('when nothing is set (a laptop), then every required setting is missing and the optional ones are advice', () => {
    expect(configReadiness(loadConfig({}))).toEqual({
      production: false,
      missing: ['NODE_ENV', 'PUBLIC_BASE_URL', 'SMTP_URL', 'EMAIL_FROM', 'STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET'],
      advice: ['WEBHOOK_TEST_LOCAL_TARGETS', 'TRUST_PROXY', 'ADMIN_USER, ADMIN_PASSWORD'],
    });
  });

  it('when a deployment sets everything, then nothing is missing; each wrong value is named alone', () => {
    expect(configReadiness(loadConfig(PRODUCTION))).toEqual({ production: true, missing: [], advice: [] });
    const missingWith = (override: Record<string, string>) => configReadiness(loadConfig({ ...PRODUCTION, ...override })).missing;
    expect(missingWith({ PUBLIC_BASE_URL: 'http://pay.example.com' })).toEqual(['PUBLIC_BASE_URL']);
    expect(missingWith({ PUBLIC_BASE_URL: 'https://localhost:3000' })).toEqual(['PUBLIC_BASE_URL']);
    expect(missingWith({ WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })).toEqual(['WEBHOOK_ALLOW_INSECURE_TARGETS']);
    expect(missingWith({ STRIPE_API_URL: 'http://127.0.0.1:9999' })).toEqual(['STRIPE_API_URL, STRIPE_JS_URL']);
    expect(configReadiness(loadConfig({ ...PRODUCTION, WEBHOOK_TEST_LOCAL_TARGETS: 'true' })).advice).toEqual(['WEBHOOK_TEST_LOCAL_TARGETS']);
    // No value is ever in a note: the checklist is safe to print and to answer on /readyz.
    const text = JSON.stringify(productionChecks(loadConfig(PRODUCTION)));
    for (const secret of ['secret-password', 'sk_live_abc', 'whsec_abc', 'admin-secret']) expect(text).not.toContain(secret);
  });

  it('when npm run check runs, then it prints each setting with ok, missing or advice, and exits 1 while one is missing, 0 once none is', async () => {
    const dev = await runScript('scripts/check.ts', [], { PATH: process.env.PATH }).done;
    expect(dev.code).toBe(1);
    const lines = dev.stdout.trim().split('\n');
    expect(lines[0]).toBe('missing  NODE_ENV: production: nothing embedded, no database created but by the release step, one-time links kept out of the log');
    expect(lines.filter((l) => l.startsWith('missing '))).toHaveLength(5);
    expect(lines.at(-1)).toBe('5 required settings missing for production');
    const prod = await runScript('scripts/check.ts', [], { PATH: process.env.PATH, ...PRODUCTION }).done;
    expect(prod.code, prod.stdout).toBe(0);
    expect(prod.stdout.trim().split('\n').at(-1)).toBe('ready for production');
    expect(prod.stdout).not.toMatch(/secret-password|sk_live_abc|admin-secret/);
  });
});

describe('GET /readyz', () => {
  it('when settings are missing, then /readyz still answers 200 (Postgres and Redis answer) and names them under config', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      checks: { postgres: 'ok', redis: 'ok' },
      config: { production: false, missing: expect.arrayContaining(['NODE_ENV', 'SMTP_URL']), advice: expect.any(Array) },
      repair: { stale_after_seconds: 900, passes: {} },
    });
  });

  it('when the service runs in production with settings missing, then /readyz is still 200 and says production with what is missing', async () => {
    const server = await startTestServer({ env: { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com' } });
    try {
      const res = await server.request('GET', '/readyz');
      expect(res.status).toBe(200);
      expect(res.body.config).toEqual({
        production: true,
        missing: ['SMTP_URL', 'EMAIL_FROM', 'STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET'],
        advice: ['TRUST_PROXY', 'ADMIN_USER, ADMIN_PASSWORD'],
      });
    } finally {
      await server.close();
    }
  });
});
