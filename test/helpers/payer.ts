import { CARDS } from './cards.ts';
import type { TestServer } from './server.ts';

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
      card_number: CARDS.visa,
      expiry: '12/34',
      cvc: '123',
      ...card,
    });
  }
}

/** The path of a URL the service handed out (link url, checkout url, redirect). */
export const pathOf = (url: string) => {
  const u = new URL(url, 'http://x');
  return u.pathname + u.search;
};

/** The session id in a checkout URL. */
export const sessionOf = (location: string) => /\/(cs_[0-9A-Za-z]+)/.exec(location)![1]!;

/**
 * One payer, start to end: opens the link page, submits its form, lands on the hosted checkout
 * and pays there with `card`. Answers the session id and the checkout's answer to the payment.
 */
export async function payThroughLink(t: TestServer, linkUrl: string, form: Record<string, string> = {}, card: Record<string, string> = {}) {
  const payer = new Payer(t);
  const page = await payer.get(pathOf(linkUrl));
  if (page.status !== 200) throw new Error(`link page: ${page.status}`);
  // What a browser posts: the hidden src field of the page, and the payer's fields.
  const src = /name="src" value="([A-Z]+)"/.exec(page.html)![1]!;
  const fields = { src, email: 'payer@example.com', name: 'Ada Lovelace', phone: '+1 415 555 0100', ...form };
  const started = await payer.post(pathOf(linkUrl).split('?')[0]!, fields);
  if (started.status !== 303 || !started.location) throw new Error(`link form: ${started.status} ${started.html.slice(0, 300)}`);
  const sessionId = sessionOf(started.location);
  await payer.get(pathOf(started.location));
  const paid = await payer.pay(sessionId, card);
  return { payer, sessionId, paid };
}

/**
 * A payer on the invoice page: opens it, posts the Pay form (with `amount` for a partial payment)
 * and, on a 303 to the checkout, opens the checkout page. Answers the payer, the post's answer and
 * the session id (null when the post was refused).
 */
export async function startPayment(t: TestServer, url: string, amount?: string) {
  const payer = new Payer(t);
  const page = await payer.get(pathOf(url));
  if (page.status !== 200) throw new Error(`invoice page: ${page.status}`);
  const posted = await payer.post(`${pathOf(url)}/pay`, amount === undefined ? {} : { amount });
  if (posted.status !== 303) return { payer, posted, sessionId: null };
  const sessionId = sessionOf(posted.location!);
  await payer.get(pathOf(posted.location!));
  return { payer, posted, sessionId };
}

/** startPayment, then the card (4242 unless given) on the hosted checkout. */
export async function payInvoice(t: TestServer, url: string, amount?: string, card: Record<string, string> = {}) {
  const started = await startPayment(t, url, amount);
  if (!started.sessionId) throw new Error(`pay form: ${started.posted.status} ${started.posted.html.slice(0, 400)}`);
  const paid = await started.payer.pay(started.sessionId, card);
  return { ...started, paid };
}
