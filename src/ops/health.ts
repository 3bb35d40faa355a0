import { Router } from 'express';
import { repairSection, staleAfterMs } from '../repair/status.ts';
import type { Services } from '../services.ts';
import { configReadiness } from './production-checks.ts';

const withTimeout = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/**
 * Unauthenticated probes: /healthz says the process is up, /readyz that Postgres and Redis answer
 * (the status), and which production settings are missing (`config`, names only: never the status).
 * And /favicon.ico: the pages carry their icon inline, but a browser that asks anyway (a JSON URL
 * opened in a tab) gets an empty answer it may cache, not a 404.
 */
export function healthRouter(s: Services): Router {
  const r = Router();
  r.get('/favicon.ico', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.status(204).end();
  });
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    const repair = repairDetail(s); // at the same time as the checks
    const [pg, redis] = await Promise.allSettled([
      withTimeout(s.sql`select 1`, 2000),
      withTimeout(s.redis.ping(), 2000),
    ]);
    const checks = { postgres: pg.status === 'fulfilled' ? 'ok' : 'down', redis: redis.status === 'fulfilled' ? 'ok' : 'down' };
    const ok = checks.postgres === 'ok' && checks.redis === 'ok';
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', checks, repair: await repair, config: configReadiness(s.config) });
  });
  return r;
}

/**
 * The repair passes' last success for operators (src/repair/status.ts), or null when Postgres does
 * not answer in time. Detail only: it never changes the status.
 */
async function repairDetail(s: Services) {
  return withTimeout(repairSection(s.sql, staleAfterMs(s.config.reconcileIntervalMs)), 2000).catch(() => null);
}
