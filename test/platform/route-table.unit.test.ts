import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable, type Mount } from '../../src/lib/route-table.ts';
import { routeTemplates } from '../../src/metrics/http.ts';

// The route table (src/lib/route-table.ts) must answer every request as the same routers mounted
// one after another with app.use(path, router) do: the same handler, params, middleware on the
// way, status, Allow header and route template, whatever the path's case, encoding or slashes.

type Templates = { get(route: object): string | undefined };

/** The app's routers, made afresh for each app: probes, an opaque page router, a root page router, and /v1. */
function mounts(templates: () => Templates): Mount[] {
  const trail = (name: string) => (_req: Request, res: Response, next: NextFunction) => {
    res.locals.trail = [...((res.locals.trail as string[] | undefined) ?? []), name];
    next();
  };
  const answer = (name: string) => (req: Request, res: Response) => {
    res.json({ at: name, params: req.params, trail: res.locals.trail ?? [], template: req.route ? templates().get(req.route) : null });
  };
  const health = Router().get('/healthz', answer('healthz')).get('/readyz', answer('readyz')).get('/Status', answer('status'));
  const stripe = Router().post('/processor/stripe/webhook', trail('raw'), answer('stripe'));
  const checkout = Router();
  checkout.use(trail('page-security'));
  checkout.get('/:id', answer('checkout-page'));
  checkout.post('/:id/pay', answer('checkout-pay'));
  checkout.use((err: Error, _req: Request, res: Response, _next: NextFunction) => void res.status(400).json({ pageError: err.message }));
  // A page router taken out of its nesting (the app flattens the link pages, mounted at /l): its
  // error handler must catch its own routes' errors and no one else's.
  const links = Router();
  links.get('/:key', trail('link-security'), (req, res, next) => (req.params.key === 'fail' ? next(new Error('link failed')) : answer('link-page')(req, res)));
  links.post('/:key', (req, _res, next) => (req.params.key === 'throw' ? Promise.reject(new Error('link threw')) : next()));
  links.get('/:key/paid', answer('link-paid'));
  links.use((err: Error, req: Request, res: Response, _next: NextFunction) => void res.status(409).json({ linkError: err.message, base: req.baseUrl, url: req.url }));
  const rootPages = Router().get('/:page', (req, res, next) => (req.params.page === 'about' ? answer('about')(req, res) : next()));

  const v1 = Router();
  v1.use('/', Router().get('/openapi.json', answer('openapi')));
  v1.use((req, res, next) => (req.get('x-key') === 'k' ? trail(`auth ${req.path}`)(req, res, next) : void res.status(401).json({ error: 'key' })));
  v1.use(trail('body'));
  // Faults of a middleware that runs in turn with the two before it (their layers are one in the table).
  v1.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.trail = [...((res.locals.trail as string[] | undefined) ?? []), `faults ${req.baseUrl} ${req.url}`];
    switch (req.get('x-fault')) {
      case 'throw':
        throw new Error('thrown');
      case 'next':
        return next(new Error('passed'));
      case 'reject':
        return Promise.reject(new Error('rejected'));
      case 'reject-empty':
        return Promise.reject();
      case 'route':
        return next('route');
      case 'router':
        return next('router');
      case 'later':
        return void setTimeout(next, 1);
      default:
        return next();
    }
  });
  const keys = Router();
  keys.use((req, _res, next) => (req.method === 'POST' && req.get('idempotency-key') ? next(new Error('no idempotency here')) : next()));
  keys.get('/', answer('keys-list')).post('/', answer('keys-create'));
  v1.use('/api-keys', keys);
  v1.use('/customers', Router().post('/:id/portal-sessions', answer('portal-session')));
  v1.use(trail('idempotency'));
  const customers = Router();
  customers.get('/', answer('customers-list')).post('/', answer('customers-create'));
  customers.get('/:id', (req, res, next) => (req.params.id === 'pass' ? next() : answer('customer')(req, res)));
  customers.delete('/:id', answer('customer-delete'));
  customers.route('/:id/notes').get(answer('notes')).all(answer('notes-any'));
  v1.use('/customers', customers);
  v1.use('/customers', Router().get('/:other', answer('customers-second')));
  v1.use('/events', Router().get('/:id', answer('event')));
  v1.use('/events', Router().get('/:id/deliveries', answer('deliveries')).post('/:id/resend', answer('resend')));
  const helpers = Router();
  helpers.use(trail('test-only'));
  helpers.post('/pay/:id', answer('helper-pay'));
  helpers.use('/deep', Router().get('/:x', answer('deep')));
  v1.use('/test-helpers', helpers);
  return [
    { path: '/', router: health, flatten: true },
    { path: '/', router: stripe, flatten: true },
    { path: '/checkout', router: checkout },
    { path: '/l', router: links, flatten: true },
    { path: '/', router: rootPages },
    { path: '/v1', router: v1, flatten: true },
  ];
}

function makeApp(table: boolean): express.Express {
  const app = express();
  let templates: Templates = new WeakMap();
  const ms = mounts(() => templates);
  if (table) app.use(routeTable(ms));
  else for (const m of ms) app.use(m.path, m.router);
  // The trail of middleware passed on the way is part of every answer, a 404 or an error too: what
  // each middleware saw (req.url, req.baseUrl, req.path) must be the same wherever no route answers.
  app.use((req, res) => void res.status(404).json({ notFound: req.path, trail: res.locals.trail ?? [] }));
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => void res.status(500).json({ error: err.message, trail: res.locals.trail ?? [] }));
  templates = routeTemplates(app.router as never);
  return app;
}

interface Answer {
  status: number;
  allow: string | undefined;
  type: string | undefined;
  body: string;
}

function ask(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, allow: res.headers.allow, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const servers: http.Server[] = [];
let nested = 0;
let flat = 0;
beforeAll(async () => {
  const listen = async (app: express.Express) => {
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as AddressInfo).port;
  };
  nested = await listen(makeApp(false));
  flat = await listen(makeApp(true));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function same(method: string, path: string, headers: Record<string, string> = { 'x-key': 'k' }): Promise<Answer> {
  const [a, b] = await Promise.all([ask(nested, method, path, headers), ask(flat, method, path, headers)]);
  expect({ method, path, ...b }).toEqual({ method, path, ...a });
  return b;
}

const PATHS = [
  '/', '/healthz', '/healthz/', '/HEALTHZ', '/status', '/STATUS/', '/healthz/x', '/readyz?x=1', '/processor/stripe/webhook', '/about', '/nope', '/about/x',
  '/checkout/cs_1', '/checkout/cs_1/pay', '/Checkout/cs_1', '/checkout', '/v1', '/v1/', '/V1/openapi.json', '/v1/openapi.json/',
  '/v1/customers', '/v1/customers/', '/v1/Customers/cus_1', '/v1/customers/cus_1?expand=x', '/v1/customers/cus_1/',
  '/v1/customers/cus_1/portal-sessions', '/v1/customers/pass', '/v1/customers/%63us', '/v1/%63ustomers/cus_1', '/v1//customers',
  '/v1/customers/cus_1/notes', '/v1/unknown/x', '/v1/api-keys', '/v1/events/evt_1', '/v1/events/evt_1/deliveries',
  '/v1/events/evt_1/resend', '/v1/test-helpers/pay/p_1', '/v1/test-helpers/deep/x', '/v1/test-helpers/deep', '//x', '/v1?x',
  '/v1/customers/caf%C3%A9', '/v1/cust%2Fomers/x', '/l/tea', '/L/tea/', '/l/fail', '/l/throw', '/l/tea/paid', '/l', '/l/', '/l/a/b/c',
];
const METHODS = ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'PATCH', 'PURGE'];

describe('routeTable', () => {
  it('when every path of a list is asked with every method, with and without the key, then both apps answer the same', async () => {
    for (const path of PATHS) for (const method of METHODS) for (const headers of [{ 'x-key': 'k' }, {}] as Array<Record<string, string>>) await same(method, path, headers);
  });

  it('when a route answers, then it is the same handler with the same params, middleware on the way and route template', async () => {
    const a = await same('GET', '/v1/Customers/cus_1?expand=x');
    expect(JSON.parse(a.body)).toEqual({ at: 'customer', params: { id: 'cus_1' }, trail: ['auth /Customers/cus_1', 'body', 'faults /v1 /Customers/cus_1?expand=x', 'idempotency'], template: '/v1/customers/:id' });
    const b = await same('GET', '/v1/customers/pass');
    expect(JSON.parse(b.body)).toMatchObject({ at: 'customers-second', params: { other: 'pass' }, template: '/v1/customers/:other' });
    const c = await same('POST', '/v1/api-keys', { 'x-key': 'k', 'idempotency-key': 'x' });
    expect(c.status).toBe(500);
    const d = await same('GET', '/healthz/');
    expect(JSON.parse(d.body)).toMatchObject({ at: 'healthz', template: '/healthz' });
    const e = await same('OPTIONS', '/v1/customers/cus_1');
    expect(e.allow).toBeDefined();
    const f = await same('GET', '/L/fail');
    expect([f.status, JSON.parse(f.body)]).toEqual([409, { linkError: 'link failed', base: '/L', url: '/fail' }]);
    const g = await same('POST', '/l/throw');
    expect([g.status, JSON.parse(g.body)]).toEqual([409, { linkError: 'link threw', base: '/l', url: '/throw' }]);
    const h = await same('GET', '/l/tea');
    expect(JSON.parse(h.body)).toMatchObject({ at: 'link-page', params: { key: 'tea' }, trail: ['link-security'], template: '/l/:key' });
  });

  it('when a middleware run in turn with others throws, passes an error, rejects, skips or leaves the router, then both apps answer the same', async () => {
    const paths = ['/v1/customers', '/v1/customers/cus_1', '/v1/api-keys', '/v1/customers/cus_1/portal-sessions', '/v1/unknown', '/v1/openapi.json'];
    for (const fault of ['throw', 'next', 'reject', 'reject-empty', 'route', 'router', 'later', 'none']) {
      for (const path of paths) for (const method of ['GET', 'POST', 'DELETE']) await same(method, path, { 'x-key': 'k', 'x-fault': fault });
    }
    expect(JSON.parse((await same('GET', '/v1/customers/cus_1', { 'x-key': 'k', 'x-fault': 'reject-empty' })).body)).toMatchObject({ error: 'Rejected promise' });
    expect(JSON.parse((await same('GET', '/v1/customers/cus_1', { 'x-key': 'k', 'x-fault': 'router' })).body)).toMatchObject({ notFound: '/v1/customers/cus_1' });
    expect(JSON.parse((await same('GET', '/v1/customers/cus_1', { 'x-key': 'k', 'x-fault': 'later' })).body)).toMatchObject({ at: 'customer' });
  });

  it('when paths are made at random from the routes\' segments, in any case, encoded or not, then both apps answer the same', async () => {
    const segment = fc.constantFrom('v1', 'V1', 'customers', 'CUSTOMERS', 'cus_1', 'pass', 'portal-sessions', 'notes', 'events', 'evt_1', 'deliveries', 'resend', 'api-keys', 'test-helpers', 'deep', 'pay', 'healthz', 'checkout', 'l', 'L', 'fail', 'throw', 'paid', 'about', 'status', 'Status', 'openapi.json', '', '%63ustomers', 'caf%C3%A9', 'a.b', '~x', ':id', '*');
    const query = fc.constantFrom('', '?x=1', '?', '?a/b');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 5 }), query, fc.constantFrom(...METHODS), fc.boolean(), async (segs, q, method, key) => {
        await same(method, `/${segs.join('/')}${q}`, key ? { 'x-key': 'k' } : {});
      }),
      { numRuns: 400 },
    );
  });
});
