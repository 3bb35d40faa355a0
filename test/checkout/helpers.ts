import type { TestServer } from '../helpers/server.ts';

export const SUCCESS_URL = 'https://merchant.example/thanks?session={CHECKOUT_SESSION_ID}';

export async function createSession(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/checkout/sessions', {
    key,
    body: { amount: 1999, currency: 'usd', success_url: SUCCESS_URL, ...body },
  });
  if (res.status !== 200) throw new Error(`create session: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface PageAnswer {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

/** A payer without a browser: keeps the CSRF cookie, reads the form token, posts urlencoded forms. */
export class Payer {
  cookie = '';
  token = '';
  readonly t: TestServer;
  /** Sent with every request (a test of client addresses sets X-Forwarded-For here). */
  headers: Record<string, string>;
  constructor(t: TestServer, headers: Record<string, string> = {}) {
    this.t = t;
    this.headers = headers;
  }

  protected async send(method: string, path: string, form?: Record<string, string>): Promise<PageAnswer> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookie) headers.cookie = this.cookie;
    let body: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(this.t.url + path, { method, headers, body, redirect: 'manual' });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) this.cookie = setCookie.split(';')[0]!;
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html);
    if (token) this.token = token[1]!;
    return { status: res.status, location: res.headers.get('location'), html, headers: res.headers };
  }

  get(path: string) {
    return this.send('GET', path);
  }

  post(path: string, form: Record<string, string>) {
    return this.send('POST', path, { _csrf: this.token, ...form });
  }

  /** Opens the session page, then pays with `card` (defaults fill the other fields). */
  async pay(sessionId: string, card: Partial<Record<'email' | 'name' | 'card_number' | 'expiry' | 'cvc', string>> = {}) {
    if (!this.token) await this.get(`/checkout/${sessionId}`);
    return this.post(`/checkout/${sessionId}/pay`, {
      email: 'payer@example.com',
      name: 'Ada Lovelace',
      card_number: '4242 4242 4242 4242',
      expiry: '12/34',
      cvc: '123',
      ...card,
    });
  }
}

/** The events whose data.object is `objectId`, oldest first: [type, the object as recorded]. */
export async function eventObjects(t: TestServer, objectId: string): Promise<Array<{ type: string; object: any }>> {
  const rows = await t.sql<{ type: string; data: unknown }[]>`
    select type, data from events where position(${objectId} in data::text) > 0 order by id`;
  return rows
    .map((r) => ({ type: r.type, data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { object: any } }))
    .filter((r) => r.data.object?.id === objectId)
    .map((r) => ({ type: r.type, object: r.data.object }));
}

export async function eventsFor(t: TestServer, objectId: string): Promise<string[]> {
  return (await eventObjects(t, objectId)).map((e) => e.type);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a truthy value or the time is up (for work done by workers). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(100);
  }
}
