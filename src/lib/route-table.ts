import { Router, type Request, type RequestHandler, type Response } from 'express';

/**
 * A router and the path it is mounted at. `flatten`: its routes and middleware, and those of the
 * routers mounted in it at literal paths, are taken out of their nesting into the table (see
 * routeTable); without it the router is kept whole, entered as before.
 */
export interface Mount {
  path: string;
  router: Router | RequestHandler;
  flatten?: boolean;
}

/** What express's router and route objects hold (the `router` package's Layer, Route and Router). */
interface Layer {
  handle: unknown;
  rawPath?: unknown;
  method?: string;
  route?: Route;
}
interface Route {
  path: unknown;
  stack: Layer[];
}
interface RouterObject {
  stack: Layer[];
  caseSensitive?: boolean;
  mergeParams?: boolean;
  strict?: boolean;
}

/** One layer of the table, with its full path: middleware (`use`, a prefix) or a route (the whole path). */
type Entry = { kind: 'use'; path: string; handle: RequestHandler } | { kind: 'route'; path: string; route: Route };

/** How many leading path segments pick a request's layers. */
const DEPTH = 2;
/** A request segment that no literal equals (the fallback of a segment no layer names). */
const OTHER = '\0';
/** A segment the table keys on: plain ASCII, compared as express does (case-insensitively). */
const PLAIN = /^[A-Za-z0-9._~-]*$/;

const isRouter = (h: unknown): h is RouterObject & RequestHandler => typeof h === 'function' && Array.isArray((h as Partial<RouterObject>).stack);

/** Joins a mount path and a path below it as express matches them: '/v1' + '/' is '/v1'. */
const join = (prefix: string, path: string) => (prefix === '/' ? path : path === '/' ? prefix : prefix + path);

/**
 * A router whose layers can be taken out of it unchanged: mounted at a literal path, with express's
 * defaults and string paths only.
 */
function flattenable(path: string, h: unknown): h is RouterObject {
  if (!isRouter(h) || !PLAIN.test(path.replaceAll('/', '')) || h.caseSensitive || h.mergeParams || h.strict) return false;
  return h.stack.every((l) => (l.route ? typeof l.route.path === 'string' : typeof l.rawPath === 'string'));
}

function flattenInto(out: Entry[], prefix: string, r: RouterObject): void {
  for (const l of r.stack) {
    if (l.route) out.push({ kind: 'route', path: join(prefix, l.route.path as string), route: l.route });
    else {
      const path = join(prefix, l.rawPath as string);
      if (flattenable(path, l.handle)) flattenInto(out, path, l.handle);
      else out.push({ kind: 'use', path, handle: l.handle as RequestHandler });
    }
  }
}

/**
 * The first DEPTH segments a layer can answer, lowercased; null from the first one it can answer
 * whatever its value (a prefix ended, a parameter, a pattern). A route's path ends where it ends,
 * so a route of one segment answers an empty second one only ('/healthz' and '/healthz/').
 */
function reach(e: Entry): Array<string | null> {
  const segs = e.path === '/' ? [] : e.path.split('/').slice(1);
  const out: Array<string | null> = [];
  for (let i = 0; i < DEPTH; i++) {
    const s = segs[i];
    if (s === undefined) {
      out.push(e.kind === 'route' ? '' : null);
      if (e.kind === 'use') break;
      continue;
    }
    if (!PLAIN.test(s) || s === '') {
      out.push(null);
      break;
    }
    out.push(s.toLowerCase());
  }
  return out;
}

/** Whether a layer of that reach may answer a request whose first segments are `key`. */
function mayAnswer(r: Array<string | null>, key: string[]): boolean {
  for (let i = 0; i < key.length; i++) {
    if (i >= r.length || r[i] === null) return true;
    if (r[i] !== key[i]) return false;
  }
  return true;
}

/** Runs a middleware as express's Layer#handleRequest does: a throw or a rejected promise goes to `next`. */
function runAsLayer(h: RequestHandler, req: Request, res: Response, next: (err?: unknown) => void): void {
  try {
    const ret: unknown = h(req, res, next);
    if (ret instanceof Promise) ret.then(undefined, (e: unknown) => next(e ?? new Error('Rejected promise')));
  } catch (e) {
    next(e);
  }
}

/**
 * Middleware functions mounted one after another at one path, run as one layer (issue 28: each
 * layer of a prefix cuts the prefix off the URL and puts it back, and its `next` allocates, so
 * /v1's key check, body reader and Idempotency-Key layer cost three such steps before every
 * route). Each sees what it saw as a layer of its own: the same req.url and req.baseUrl (the
 * prefix is cut once for all), its error or rejected promise passed on as express passes it (the
 * middleware after it are not error handlers, so express would pass over them), `next('route')`
 * going on to the next one as express does for middleware, `next('router')` leaving the router.
 * Error handlers (four arguments) and routers stay layers of their own.
 */
function inTurn(handles: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null && err !== 'route') return next(err);
      const h = handles[i++];
      if (h === undefined) return next();
      runAsLayer(h, req, res, step);
    };
    step();
  };
}

/**
 * A prefix mount without the router's work (issue 28): `handle` run as express runs middleware
 * mounted at a literal prefix that every request of this router starts with (its key fixes it), so
 * the layer always matches. Express cuts the prefix in its router's `next` (a match of the layer's
 * pattern, the cut, the restore, the parameters' callback) on every request; here the same cut and
 * restore are done directly, with express's own rules (trimPrefix and the restore at the top of
 * `next` in the router package): req.url loses the prefix and starts with a slash (one added when
 * it does not), req.baseUrl gains it, both are put back before the next layer, and a throw or a
 * rejected promise is passed on as Layer#handleRequest passes it. `prefixLength` counts the
 * prefix's characters, which the URL's own characters replace (express matches case-insensitively).
 */
function underPrefix(prefixLength: number, handle: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const parentUrl = req.baseUrl;
    const removed = req.url.slice(0, prefixLength);
    const rest = req.url.slice(prefixLength);
    const slashAdded = rest.charCodeAt(0) !== 47; /* / */
    req.url = slashAdded ? `/${rest}` : rest;
    req.baseUrl = parentUrl + removed;
    let restored = false;
    const back = (err?: unknown): void => {
      if (!restored) {
        restored = true;
        if (slashAdded && (req.url === '/' || req.url.startsWith('/?'))) req.url = req.url.slice(1);
        req.baseUrl = parentUrl;
        req.url = removed + req.url;
      }
      next(err as Parameters<typeof next>[0]);
    };
    runAsLayer(handle, req, res, back);
  };
}

/** Whether a layer's path is fixed by the key its router serves: one or two literal segments equal to the key's. */
function fixedByKey(path: string, key: readonly string[]): boolean {
  const segs = path.split('/').slice(1);
  if (segs.length === 0 || segs.length > key.length) return false;
  return segs.every((s, i) => key[i] !== OTHER && PLAIN.test(s) && s !== '' && s.toLowerCase() === key[i]);
}

/** A middleware function that can run in turn with its neighbours (inTurn): not an error handler, not a router. */
const plainMiddleware = (e: Entry): e is Extract<Entry, { kind: 'use' }> => e.kind === 'use' && !isRouter(e.handle) && e.handle.length < 4;

/**
 * The router of one key's layers, in their order; middleware at a prefix the key fixes (/v1's key
 * check, body reader and Idempotency-Key layer, for every /v1 key) runs under underPrefix.
 */
function routerOf(entries: Entry[], key: readonly string[]): Router {
  const r = Router();
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'use') {
      let end = i + 1;
      const plain = plainMiddleware(e);
      if (plain) while (end < entries.length && plainMiddleware(entries[end]!) && entries[end]!.path === e.path) end++;
      const group = entries.slice(i, end) as Array<Extract<Entry, { kind: 'use' }>>;
      const handle = group.length === 1 ? e.handle : inTurn(group.map((g) => g.handle));
      if (plain && fixedByKey(e.path, key)) r.use('/', underPrefix(e.path.length, handle));
      else r.use(e.path, handle);
      i = end - 1;
      continue;
    }
    const route = r.route(e.path) as unknown as Record<string, (h: unknown) => void>;
    for (const l of e.route.stack) route[l.method ?? 'all']!(l.handle);
  }
  return r;
}

/** Per character code below 128: 0 not in a plain segment, 1 plain, 2 plain and an upper-case letter (PLAIN, as a table). */
const PLAIN_CODES = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (PLAIN.test(ch)) PLAIN_CODES[c] = ch === ch.toLowerCase() ? 1 : 2;
}

/**
 * The first DEPTH segments of a request's URL, lowercased; null when one is not plain. One pass
 * over each segment's characters (issue 28: no regular expression and no lowercasing per segment
 * unless it holds an upper-case letter).
 */
function keyOf(url: string): string[] | null {
  if (url.charCodeAt(0) !== 47 /* / */) return null;
  const key: string[] = [];
  let at = 1;
  for (let i = 0; i < DEPTH; i++) {
    let end = at;
    let upper = false;
    while (end < url.length) {
      const c = url.charCodeAt(end);
      if (c === 47 || c === 63 /* ? */) break;
      const kind = c < 128 ? PLAIN_CODES[c] : 0;
      if (kind === 0) return null;
      if (kind === 2) upper = true;
      end++;
    }
    const s = at <= url.length ? url.slice(at, end) : '';
    key.push(upper ? s.toLowerCase() : s);
    at = url.charCodeAt(end) === 47 ? end + 1 : url.length + 1;
  }
  return key;
}

/**
 * The app's routers as one table, with the answers of mounting each in order (`app.use(path,
 * router)`), walked in fewer steps (issue 28: a /v1 call went through 27 to 29 layers and entered
 * five or six routers before its route). The mounts marked `flatten` give their layers with
 * full paths (`/v1/customers/:id`), so that a /v1 call enters one router below the app's; then each
 * request walks only the layers its first two path segments can reach, in their order: a router
 * per pair of segments that some layer names, one per first segment for the others, one for the
 * rest; for GET, POST, PATCH, DELETE and PUT, only the routes that handle the method (express
 * passes over the others after matching their path). A route's handlers see the same `req.params`
 * and `req.route` (its path the full one); `req.baseUrl` and `req.path` are the table's (the
 * app's) rather than their old router's, while middleware sees them as before.
 *
 * Two kinds of request go through the routers nested as they were mounted, where express's answer
 * depends on the nesting: OPTIONS (each router answers it with the methods of its own routes, at
 * its end), and a URL whose first two segments are not plain ASCII (encoded, or not a path).
 * test/platform/route-table.unit.test.ts compares both forms. `stack` lists the routers, for
 * whatever reads the app's routes (the HTTP metrics' route templates).
 */
export function routeTable(mounts: readonly Mount[]): RequestHandler & { stack: Array<{ handle: Router; rawPath: string }> } {
  const entries: Entry[] = [];
  for (const m of mounts) {
    if (m.flatten && flattenable(m.path, m.router)) flattenInto(entries, m.path, m.router);
    else entries.push({ kind: 'use', path: m.path, handle: m.router as RequestHandler });
  }
  const reaches = entries.map(reach);
  // A route that cannot handle the method is passed over by express (after matching its path):
  // left out of that method's routers. HEAD keeps them all (express enters a route without a GET for it).
  const handles = (e: Entry, method: string) => e.kind === 'use' || (e.route as Route & { _handlesMethod(m: string): boolean })._handlesMethod(method);
  const pick = (key: string[], method: string) => routerOf(entries.filter((e, i) => mayAnswer(reaches[i]!, key) && (method === '' || handles(e, method))), key);
  const byKey = new Map<string, Router>();
  for (const method of ['', ...BY_METHOD]) {
    for (const r of reaches) {
      const first = r[0];
      if (typeof first !== 'string') continue;
      if (!byKey.has(`${method} ${first}/${OTHER}`)) byKey.set(`${method} ${first}/${OTHER}`, pick([first, OTHER], method));
      const second = r[1];
      if (typeof second === 'string' && !byKey.has(`${method} ${first}/${second}`)) byKey.set(`${method} ${first}/${second}`, pick([first, second], method));
    }
    byKey.set(`${method} ${OTHER}/${OTHER}`, pick([OTHER, OTHER], method));
  }
  const nested = Router();
  for (const m of mounts) nested.use(m.path, m.router);
  const handler: RequestHandler = (req, res, next) => {
    const key = req.method === 'OPTIONS' ? null : keyOf(req.url);
    if (key === null) return nested(req, res, next);
    const method = BY_METHOD.has(req.method) ? req.method : '';
    const r = byKey.get(`${method} ${key[0]}/${key[1]}`) ?? byKey.get(`${method} ${key[0]}/${OTHER}`) ?? byKey.get(`${method} ${OTHER}/${OTHER}`)!;
    r(req, res, next);
  };
  const stack = [nested, ...byKey.values()].map((handle) => ({ handle, rawPath: '/' }));
  return Object.assign(handler, { stack });
}

/** The methods with routers of their own (their routes only); any other method walks every route of its segments. */
const BY_METHOD = new Set(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
