import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import helmet from 'helmet';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Db, Sql } from '../db/sql.ts';
import { setBounded } from '../lib/bounded.ts';
import { fixedHeaders, headerOf, setLater, setLaterAll } from '../lib/headers.ts';
import { isDatabaseUnavailable } from '../lib/dependencies.ts';
import { randomView } from '../lib/random.ts';
import { sendHtml } from './html.ts';
import { brandCssHash, messagePage, PAGE_CSS_HASH, type PageBrand } from './layout.ts';

/**
 * Security headers of the hosted pages (not of the JSON API): a strict CSP (no script at all,
 * the one inline stylesheet by hash, no framing), no caching of pages that show payment data.
 * `formTargets`: URLs whose origins every page of the router may post its forms to (the link
 * pages' forms end on the hosted checkout), in the policy from the start rather than added per
 * page by allowFormTargets (issue 28).
 */
export function hostedPageSecurity(styleHash: string = PAGE_CSS_HASH, formTargets: readonly string[] = []): RequestHandler {
  const targets = [...new Set(formTargets.map((u) => new URL(u).origin))];
  const headers = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: [styleHash],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'", ...targets],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
  // Written with the head, as one list (src/lib/headers.ts).
  const set = fixedHeaders([['Cache-Control', 'no-store'], ...headersOf(headers)]);
  return (_req, res, next) => {
    setLaterAll(res, set);
    next();
  };
}

/**
 * The headers a middleware that only sets fixed headers sets, in its order, read once by running
 * it against a stand-in response (issue 28: helmet's fourteen middlewares in a chain cost a hosted
 * page about as much as setting their headers). helmet's `removeHeader('X-Powered-By')` has
 * nothing to do here: the app never sets that header (src/app.ts). Anything but a synchronous
 * `next()` with fixed headers is refused at start-up.
 */
function headersOf(middleware: RequestHandler): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  let passed = false;
  const res = {
    setHeader: (name: string, value: unknown) => void headers.push([name, String(value)]),
    removeHeader: (name: string) => {
      if (name.toLowerCase() !== 'x-powered-by') throw new Error(`headersOf: the middleware removes ${name}`);
    },
  };
  void middleware({} as Request, res as unknown as Response, (err?: unknown) => {
    if (err) throw err;
    passed = true;
  });
  if (!passed) throw new Error('headersOf: the middleware did not pass the request on at once');
  return headers;
}

/** Origins of the URLs pages name (the service's own, a merchant's success_url), by URL; null for a non-URL. */
const origins = new Map<string, string | null>();
const MAX_ORIGINS = 1_000;

/** A URL's origin, parsed once per URL (the same few URLs come back on every page); null when it is not a URL. */
function originOf(url: string): string | null {
  let origin = origins.get(url);
  if (origin !== undefined) return origin;
  try {
    origin = new URL(url).origin;
  } catch {
    origin = null;
  }
  setBounded(origins, MAX_ORIGINS, url, origin);
  return origin;
}

/**
 * Lets the page's forms end on other origins. Browsers apply form-action to the redirects that
 * follow a form post too, so a form whose answer is a 303 to the merchant's success_url needs
 * the merchant's origin listed.
 */
export function allowFormTargets(res: Response, urls: Array<string | null | undefined>): void {
  const origins = new Set<string>();
  for (const u of urls) {
    const origin = u ? originOf(u) : null;
    if (origin) origins.add(origin);
  }
  const csp = headerOf(res, 'Content-Security-Policy');
  if (csp === undefined || origins.size === 0) return;
  const list = [...origins].join(' ');
  setLater(res, 'Content-Security-Policy', rewritten(csp, `f ${list}`, () => csp.replace("form-action 'self'", `form-action 'self' ${list}`)));
}

/**
 * The policies made by rewriting another for a page's origins or brand, by the policy and what was
 * added: the same few come back on every page load (issue 28: the rewrites were about a hundredth
 * of a link page's CPU). Keyed by the policy first, so that no key is built from its whole text.
 */
const rewrites = new Map<string, Map<string, string>>();
/** At most this many policies, and this many changes of each: 10,000 policies of a few hundred bytes. */
const MAX_REWRITES = 100;

function rewritten(csp: string, change: string, make: () => string): string {
  let byChange = rewrites.get(csp);
  if (byChange === undefined) setBounded(rewrites, MAX_REWRITES, csp, (byChange = new Map()));
  let out = byChange.get(change);
  if (out === undefined) {
    out = make();
    setBounded(byChange, MAX_REWRITES, change, out);
  }
  return out;
}

/**
 * Lets this response's page show the merchant's brand (renderPage's `brand`): the brand colour's
 * stylesheet by its hash in style-src, and the logo's origin in img-src. Nothing else is opened:
 * no 'unsafe-inline', and the logo's origin only on the pages of that merchant.
 */
export function allowBrand(res: Response, brand: PageBrand): void {
  const color = brand.brand_color;
  const logo = brand.logo_url;
  // Without a colour or a logo the policy stays as it is (most pages: nothing to set again).
  if (!color && !logo) return;
  const csp = headerOf(res, 'Content-Security-Policy');
  if (csp === undefined) return;
  setLater(
    res,
    'Content-Security-Policy',
    rewritten(csp, `b ${color ?? ''} ${logo ?? ''}`, () => {
      let out = csp;
      if (color) out = out.replace(/(^|;)style-src ([^;]*)/, (_m, pre: string, list: string) => `${pre}style-src ${list} ${brandCssHash(color)}`);
      if (logo) {
        const origin = new URL(logo).origin;
        out = out.replace(/(^|;)img-src ([^;]*)/, (_m, pre: string, list: string) => `${pre}img-src ${list} ${origin}`);
      }
      return out;
    }),
  );
}

/** Where Stripe.js and the Stripe API live (config.stripe.jsUrl / apiUrl; stand-ins in tests). */
export interface StripeOrigins {
  jsUrl: string;
  apiUrl: string;
}

/** `https://*.js.stripe.com` for a DNS name; nothing for an IP address or a single label (a stand-in). */
function subdomainsOf(u: URL): string[] {
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(u.hostname) && !/^[\d.]+$/.test(u.hostname) ? [`${u.protocol}//*.${u.hostname}`] : [];
}

/**
 * Lets the Payment Element page run Stripe.js, as Stripe's integration security guide lists for
 * it: scripts from js.stripe.com (and its subdomains) besides our own file, its frames from
 * js.stripe.com and hooks.stripe.com (the 3-D Secure challenge), calls to api.stripe.com, and to
 * our own prepare endpoint. Every origin is derived from STRIPE_JS_URL and STRIPE_API_URL, so
 * the stand-ins of the tests are allowed exactly as Stripe is in production; default-src stays
 * 'none', and nothing else (no inline script, no eval) is opened.
 */
export function allowPaymentElement(res: Response, stripe: StripeOrigins): void {
  const csp = headerOf(res, 'Content-Security-Policy');
  if (csp === undefined) return;
  const js = new URL(stripe.jsUrl);
  const api = new URL(stripe.apiUrl);
  // Stripe's 3-D Secure frames come from hooks.stripe.com, the sibling of api.stripe.com; a
  // stand-in API serves them from its own origin.
  const hooks = api.hostname.startsWith('api.') ? `${api.protocol}//hooks.${api.hostname.slice(4)}${api.port ? `:${api.port}` : ''}` : api.origin;
  const jsSources = [js.origin, ...subdomainsOf(js)];
  const list = (xs: string[]) => [...new Set(xs)].join(' ');
  setLater(
    res,
    'Content-Security-Policy',
    `${csp};script-src 'self' ${list(jsSources)};frame-src ${list([...jsSources, hooks])};connect-src 'self' ${api.origin}`,
  );
}

const COOKIE = 'hp_csrf';
const NONCE = /^[A-Za-z0-9_-]{22}$/;
/**
 * The CSRF cookie's attributes after its value, as the cookie package writes them, made once for
 * plain and secure requests: a nonce is base64url, so nothing in it is encoded, and the header is
 * the same bytes without a parse of the options per page (issue 28: about 0.35 µs of a first visit).
 */
const cookieTail = (secure: boolean) => stringifySetCookie(COOKIE, '', { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 86400, secure }).slice(COOKIE.length + 1);
const COOKIE_TAILS = { plain: cookieTail(false), secure: cookieTail(true) };

const readCookie = (req: Request, name: string): string | undefined => parseCookie(req.headers.cookie ?? '')[name];

export interface Csrf {
  /** The token for the page's forms; sets the browser's CSRF cookie when it has none. */
  token(req: Request, res: Response, scope: string): Promise<string>;
  /** True when the posted `_csrf` field matches the cookie and the scope (a session or link id). */
  verify(req: Request, scope: string): Promise<boolean>;
}

/** The service's CSRF secret (service_secrets, made by the migrations, the same for every web process). */
export async function readCsrfSecret(sql: Db): Promise<Buffer> {
  const [row] = await sql<{ value: Buffer }[]>`select value from service_secrets where name = 'csrf'`;
  if (!row) throw new Error('service_secrets has no csrf secret: run the migrations');
  return row.value;
}

/**
 * Signed double-submit tokens: the cookie holds a random nonce, the form holds
 * HMAC(secret, nonce | scope). Another site can neither read the cookie nor forge the HMAC; the
 * secret is generated by the migration and shared by every web process through Postgres.
 *
 * The secret is held as a KeyObject, made once: given a Buffer, createHmac makes one itself on every
 * call, which cost about 25 µs against 4 (issue 28: a sixth of a hosted page's CPU beyond its floor).
 */
export function createCsrf(sql: Sql): Csrf {
  let secret: Promise<KeyObject> | undefined;
  let loaded: KeyObject | undefined;
  const key = () =>
    (secret ??= readCsrfSecret(sql).then((value) => (loaded = createSecretKey(value)))).catch((err: unknown) => {
      secret = undefined;
      throw err;
    });
  const hmac = (k: KeyObject, nonce: string, scope: string) => createHmac('sha256', k).update(`${nonce}|${scope}`).digest('base64url');
  // Once the secret is loaded, signed at once: no promise per page (issue 28).
  const sign = async (nonce: string, scope: string) => (loaded ? hmac(loaded, nonce, scope) : hmac(await key(), nonce, scope));

  return {
    async token(req, res, scope) {
      let nonce = readCookie(req, COOKIE);
      if (!nonce || !NONCE.test(nonce)) {
        nonce = randomView(16).toString('base64url');
        setLater(res, 'Set-Cookie', `${COOKIE}=${nonce}${req.secure ? COOKIE_TAILS.secure : COOKIE_TAILS.plain}`, true);
      }
      return sign(nonce, scope);
    },
    async verify(req, scope) {
      if (req.headers['sec-fetch-site'] === 'cross-site') return false;
      const nonce = readCookie(req, COOKIE);
      const posted = (req.body as Record<string, unknown> | undefined)?._csrf;
      if (!nonce || !NONCE.test(nonce) || typeof posted !== 'string') return false;
      const expected = Buffer.from(await sign(nonce, scope));
      const given = Buffer.from(posted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/**
 * The last handler of a hosted-page router: a page, never a JSON body or a stack. A body-parser
 * refusal (oversized or malformed form) is a 4xx whose body is never echoed: it may hold a card.
 */
export const hostedPageErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const status = (err as { status?: number }).status;
  const page = (code: number, heading: string, message: string) => sendHtml(res, code, messagePage(heading, message));
  if (status && status >= 400 && status < 500) {
    req.log.info({ type: (err as { type?: string }).type, status }, 'hosted page form refused');
    return page(status, 'Please try again', 'The form could not be read. Go back and submit it again.');
  }
  if (isDatabaseUnavailable(err)) {
    req.log.warn({ code: (err as { code: string }).code }, 'database unavailable');
    if (!res.headersSent) res.setHeader('Retry-After', '2');
    return page(503, 'Temporarily unavailable', 'We cannot reach our records right now. Please try again in a few seconds.');
  }
  req.log.error({ err }, 'hosted page error');
  return page(500, 'Something went wrong', 'Something went wrong on our side. Please try again in a moment.');
};
