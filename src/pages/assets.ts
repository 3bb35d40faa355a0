import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';

/** One hand-written file served to the hosted pages, and the versioned URL the pages link to. */
export interface StaticAsset {
  /** `?v=` and the first 16 hex digits of the file's SHA-256: a changed file is a new URL. */
  version: string;
  handler: RequestHandler;
}

/**
 * Serves one script file read once at start-up. The URL carries the content's hash, so the file
 * may be cached for a year (`immutable`): a deploy that changes it changes the URL. `nosniff` and
 * the exact content type let the browser run it under the page's `script-src 'self'`.
 */
export function staticScript(file: URL): StaticAsset {
  return scriptAsset(readFileSync(file));
}

/** As staticScript, for a script whose bytes the caller has (read from a package, say). */
export function scriptAsset(body: Buffer): StaticAsset {
  const hash = createHash('sha256').update(body).digest('hex');
  const etag = `"${hash.slice(0, 32)}"`;
  return {
    version: `v=${hash.slice(0, 16)}`,
    handler: (req, res) => {
      res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
      res.setHeader('ETag', etag);
      if (req.headers['if-none-match'] === etag) return void res.status(304).end();
      res.status(200).send(body);
    },
  };
}
