// The floors of bench/floors.ts (issue 28, point 1): the least a server on the same stack can do
// for the service's hot endpoints. Two kinds, chosen by FLOOR_KIND:
//   express: Express 5 with express.json(), one route per endpoint, nothing else;
//   http:    node:http, the body read and JSON.parse'd by hand, routing by string tests.
// Both run exactly the SQL the service runs for each answer, through postgres.js with the same
// pool size as the service (FLOOR_POOL_MAX, default the service's DB_POOL_MAX default 10), look
// the API key up in memory (SHA-256 of the bearer token, then a Map, as the service's key cache
// does on a hit), and answer the same bytes: the JSON objects are built by the service's own pure
// presenters (src/customers/presenter.ts, src/checkout/presenter.ts), and the hosted link page is
// the service's page captured once (FLOOR_LINK_PAGE, a file) with only its CSRF token differing.
// Nothing else: no validation, no logging, no metrics, no idempotency, no jobs.
// Run by bench/floors.ts as `node bench/support/floor-server.ts` with DATABASE_URL, PORT.
import { createHash, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import postgres from 'postgres';
import { presentSession } from '../../src/checkout/presenter.ts';
import { presentCustomer } from '../../src/customers/presenter.ts';
import { newId } from '../../src/lib/ids.ts';
import { simulatedCustomerId } from '../../src/processor/simulator.ts';

const kind = process.env.FLOOR_KIND ?? 'express';
const port = Number(process.env.PORT ?? 0);
const checkoutUrl = process.env.FLOOR_CHECKOUT_URL ?? '';
// As src/db/sql.ts: int8 (amounts) as numbers.
const sql = postgres(process.env.DATABASE_URL!, {
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
  onnotice: () => {},
  types: { int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
});

interface Owner {
  accountId: string;
  livemode: boolean;
}
const keys = new Map<string, Owner>();
for (const k of await sql<{ key_hash: Buffer; account_id: string; livemode: boolean }[]>`
    select key_hash, account_id, livemode from api_keys where revoked_at is null`) {
  keys.set(k.key_hash.toString('hex'), { accountId: k.account_id, livemode: k.livemode });
}
const [csrfRow] = await sql<{ value: Buffer }[]>`select value from service_secrets where name = 'csrf'`;
// A KeyObject made once, as the service holds its CSRF secret (src/pages/security.ts).
const csrfSecret = createSecretKey(csrfRow!.value);
const linkPage = process.env.FLOOR_LINK_PAGE ? readFileSync(process.env.FLOOR_LINK_PAGE, 'utf8') : '';
const TOKEN = /name="_csrf" value="[^"]*"/;

function owner(authorization: string | undefined): Owner | undefined {
  const m = authorization ? /^Bearer (\S+)$/i.exec(authorization) : null;
  return m ? keys.get(createHash('sha256').update(m[1]!).digest('hex')) : undefined;
}

// The SQL of the service, statement for statement (src/customers/store.ts, src/checkout/store.ts,
// src/payment-links/store.ts, src/auth/keys.ts).
const getCustomer = async (o: Owner, id: string) =>
  (await sql`select * from customers where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`)[0];

// Test mode's processor is the simulator, whose twin the service records with the customer.
const insertCustomer = async (o: Owner, b: Record<string, any>) => {
  const id = newId('cus');
  return (
    await sql`
    with c as (
      insert into customers (id, account_id, livemode, email, first_name, last_name, phone, company_name, notes, metadata, processor_customer_id)
      values (${id}, ${o.accountId}, ${o.livemode}, ${b.email}, ${b.first_name ?? ''},
              ${b.last_name ?? ''}, ${b.phone ?? null}, ${b.company_name ?? null}, ${b.notes ?? null},
              ${sql.json(b.metadata ?? {})}, ${simulatedCustomerId(id, o.livemode)})
      returning *
    )
    select * from c`
  )[0]!;
};

const listCustomers = (o: Owner) =>
  sql`
    select * from customers
    where account_id = ${o.accountId} and livemode = ${o.livemode}
    order by ${sql('id')} desc limit ${sql.unsafe('11')}`;

async function insertSession(o: Owner, b: Record<string, any>) {
  const now = new Date();
  const items = (b.line_items ?? null) as Array<{ name: string; quantity: number; amount: number }> | null;
  const amount = items ? items.reduce((t, i) => t + i.quantity * i.amount, 0) : b.amount;
  const expires = new Date((Math.floor(now.getTime() / 1000) + 86400) * 1000);
  const [row] = await sql`
    insert into checkout_sessions (id, account_id, livemode, amount_cents, currency, success_url, cancel_url,
      customer_id, customer_email, line_items, description, metadata, payment_link_id, link_source,
      invoice_id, expires_at, created_at, updated_at, mode, payment_status, installment)
    values (${newId('cs')}, ${o.accountId}, ${o.livemode}, ${amount}, ${b.currency}, ${b.success_url}, ${b.cancel_url ?? null},
      ${b.customer_id ?? null}, ${b.customer_email ?? null}, ${items ? sql.json(items) : null}, ${b.description ?? null},
      ${sql.json(b.metadata ?? {})}, ${null}, ${null}, ${null}, ${expires}, ${now}, ${now},
      ${'payment'}, ${'unpaid'}, ${null})
    returning *`;
  return row!;
}

async function linkHtml(slug: string, cookieNonce: string | undefined): Promise<{ html: string; nonce?: string } | undefined> {
  const [link] = await sql`select *, coalesce(slug, id) as path from payment_links where slug = ${slug}`;
  if (!link) return undefined;
  await sql`select business_name, support_email, brand_color, logo_url from accounts where id = ${link.account_id}`;
  const nonce = cookieNonce ?? randomBytes(16).toString('base64url');
  const token = createHmac('sha256', csrfSecret).update(`${nonce}|${link.id}`).digest('base64url');
  return { html: linkPage.replace(TOKEN, `name="_csrf" value="${token}"`), nonce: cookieNonce ? undefined : nonce };
}

const listBody = (rows: any[]) =>
  JSON.stringify({ object: 'list', url: '/v1/customers', has_more: rows.length > 10, data: rows.slice(0, 10).map((r) => presentCustomer(r)) });
const cookie = (nonce: string) => `hp_csrf=${nonce}; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax`;
const readNonce = (header: string | undefined) => (header ? /(?:^|;\s*)hp_csrf=([^;]+)/.exec(header)?.[1] : undefined);

if (kind === 'express') {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const json = express.json({ limit: '100kb' });
  const auth: express.RequestHandler = (req, res, next) => {
    const o = owner(req.headers.authorization);
    if (!o) return void res.status(401).json({ error: { type: 'authentication_error' } });
    (req as any).owner = o;
    next();
  };
  app.get('/v1/customers/:id', auth, async (req, res) => {
    const row = await getCustomer((req as any).owner, String(req.params.id));
    if (!row) return void res.status(404).json({ error: { type: 'invalid_request_error' } });
    res.json(presentCustomer(row as any));
  });
  app.get('/v1/customers', auth, async (req, res) => {
    res.type('json').send(listBody(await listCustomers((req as any).owner)));
  });
  app.post('/v1/customers', auth, json, async (req, res) => {
    res.json(presentCustomer((await insertCustomer((req as any).owner, req.body)) as any));
  });
  app.post('/v1/checkout/sessions', auth, json, async (req, res) => {
    res.json(presentSession((await insertSession((req as any).owner, req.body)) as any, checkoutUrl));
  });
  app.get('/l/:slug', async (req, res) => {
    const page = await linkHtml(String(req.params.slug), readNonce(req.headers.cookie));
    if (!page) return void res.status(404).end();
    if (page.nonce) res.append('Set-Cookie', cookie(page.nonce));
    res.type('html').send(page.html);
  });
  app.listen(port, () => process.send?.('ready'));
} else {
  const send = (res: ServerResponse, status: number, body: string, type = 'application/json; charset=utf-8') => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const readBody = (req: IncomingMessage) =>
    new Promise<any>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
      req.on('error', reject);
    });
  const server = http.createServer(async (req, res) => {
    try {
      const url = req.url ?? '/';
      if (url.startsWith('/l/')) {
        const page = await linkHtml(decodeURIComponent(url.slice(3).split('?')[0]!), readNonce(req.headers.cookie));
        if (!page) return send(res, 404, '');
        if (page.nonce) res.setHeader('Set-Cookie', cookie(page.nonce));
        return send(res, 200, page.html, 'text/html; charset=utf-8');
      }
      const o = owner(req.headers.authorization);
      if (!o) return send(res, 401, '{"error":{"type":"authentication_error"}}');
      if (req.method === 'GET' && url.startsWith('/v1/customers/')) {
        const row = await getCustomer(o, url.slice('/v1/customers/'.length));
        return row ? send(res, 200, JSON.stringify(presentCustomer(row as any))) : send(res, 404, '{}');
      }
      if (req.method === 'GET' && url === '/v1/customers') return send(res, 200, listBody(await listCustomers(o)));
      if (req.method === 'POST' && url === '/v1/customers') return send(res, 200, JSON.stringify(presentCustomer((await insertCustomer(o, await readBody(req))) as any)));
      if (req.method === 'POST' && url === '/v1/checkout/sessions') {
        return send(res, 200, JSON.stringify(presentSession((await insertSession(o, await readBody(req))) as any, checkoutUrl)));
      }
      send(res, 404, '{}');
    } catch (err) {
      send(res, 500, JSON.stringify({ error: String(err) }));
    }
  });
  server.listen(port, () => process.send?.('ready'));
}

// SIGTERM ends the process normally, so that a CPU profile (--cpu-prof, bench/profile.ts) is written.
process.on('SIGTERM', () => process.exit(0));
