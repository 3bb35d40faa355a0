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
      card_number: '4242 4242 4242 4242',
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
