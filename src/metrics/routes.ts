import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import { readAtScrape } from './scrape.ts';

export const METRICS_PATH = '/metrics';

const digest = (v: string) => createHash('sha256').update(v).digest();

/** Whether an Authorization header carries the bearer token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/i.exec(header ?? '');
  return !!m && timingSafeEqual(digest(m[1]!), digest(token));
}

/** The token check of a scrape: null when it may go on, else the refusal (in the API's one error shape). */
export function refusal(header: string | undefined, token: string | null): ApiError | null {
  if (token === null || bearerMatches(header, token)) return null;
  const sent = /^Bearer \S/i.test(header ?? '');
  return new ApiError(sent ? 'api_key_invalid' : 'api_key_missing', 'GET /metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>.');
}

/** This process's metrics in the Prometheus text format, with the scrape-time readings made first. */
export async function exposition(s: Services): Promise<{ text: string; contentType: string }> {
  await readAtScrape(s);
  return { text: await s.metrics.registry.metrics(), contentType: s.metrics.registry.contentType };
}

/**
 * GET /metrics on the API's port, behind METRICS_TOKEN (mounted only when the token is set and
 * METRICS_PORT is not: never open by default).
 */
export function metricsHandler(s: Services, token: string): RequestHandler {
  return async (req, res) => {
    const refused = refusal(req.headers.authorization, token);
    if (refused) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      throw refused;
    }
    const { text, contentType } = await exposition(s);
    res.setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(text);
  };
}
