import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router } from 'express';
import { html, sendHtml, type Html } from '../pages/html.ts';
import { scriptAsset } from '../pages/assets.ts';
import type { Services } from '../services.ts';
import { buildDocument } from './document.ts';

/** Where the reference page lives (src/app.ts mounts it beside the hosted pages). */
export const DOCS_PATH = '/docs';

/**
 * `GET /v1/openapi.json`: the document, no key needed (src/app.ts mounts this before the key check).
 * Built on the first request and kept: it depends only on the code and PUBLIC_BASE_URL.
 */
export function openapiRouter(s: Services): Router {
  let body: { json: string; etag: string } | undefined;
  const document = () => {
    if (!body) {
      const json = JSON.stringify(buildDocument({ serverUrl: s.config.publicBaseUrl }));
      body = { json, etag: `"${createHash('sha256').update(json).digest('hex').slice(0, 32)}"` };
    }
    return body;
  };
  return Router().get('/openapi.json', (req, res) => {
    const { json, etag } = document();
    res.setHeader('Cache-Control', 'public, max-age=300');
    // A public description of a public API: readable by tools on other origins (editors, generators).
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) return void res.status(304).end();
    res.type('application/json').send(json);
  });
}

/** The address Redoc's bundle shows a logo from, in its footer: the page must ask nothing of other origins. */
const REDOC_FOOTER_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';

/**
 * Redoc's standalone bundle from the `redoc` package, served from here: its one request to another
 * origin (the footer's logo) is replaced by an empty image, which Redoc hides.
 */
function redocBundle() {
  const file = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  const source = readFileSync(file, 'utf8');
  if (!source.includes(REDOC_FOOTER_LOGO)) throw new Error(`${file}: the footer logo's address was not found: check the bundle for requests to other origins`);
  return scriptAsset(Buffer.from(source.replaceAll(REDOC_FOOTER_LOGO, '"data:,"')));
}

/**
 * The page's policy. Redoc renders with styled-components, which writes its CSS into <style>
 * elements at run time: style-src needs 'unsafe-inline' (no nonce can reach them in the standalone
 * bundle). Its search index runs in a Web Worker made from a blob: URL. Nothing else: no inline or
 * eval'd script, no other origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** System fonts: the page loads none. */
const THEME = JSON.stringify({
  typography: {
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
    headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif' },
    code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
  },
});

const page = (scriptUrl: string): Html => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · payments-service</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="/v1/openapi.json" theme="${THEME}" path-in-middle-panel="true" required-props-first="true" expand-responses="200" native-scrollbars="true"></redoc>
<script src="${scriptUrl}"></script>
</body>
</html>`;

/** `GET /docs`: the API reference, rendered in the browser by Redoc from `/v1/openapi.json`. */
export function docsRouter(): Router {
  const r = Router();
  let bundle: ReturnType<typeof redocBundle> | undefined;
  const script = () => (bundle ??= redocBundle());
  r.get(DOCS_PATH, (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-cache');
    sendHtml(res, 200, String(page(`${DOCS_PATH}/redoc.standalone.js?${script().version}`)));
  });
  r.get(`${DOCS_PATH}/redoc.standalone.js`, (req, res, next) => script().handler(req, res, next));
  return r;
}
