import type { TestServer } from './server.ts';

export interface Answer {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
  setCookies: string[];
}

/**
 * A browser without a browser, for server-rendered pages: a cookie jar, the last page's CSRF token
 * (`_csrf`), urlencoded forms, redirects not followed. `headers` is sent with every request (a test
 * of client addresses sets X-Forwarded-For there). Subclasses read more off each page (onPage).
 */
export class FormClient {
  readonly cookies = new Map<string, string>();
  token = '';
  readonly t: TestServer;
  headers: Record<string, string>;
  constructor(t: TestServer, headers: Record<string, string> = {}) {
    this.t = t;
    this.headers = headers;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** What else a subclass keeps from each answered page. */
  protected onPage(_html: string): void {}

  async send(method: string, path: string, form?: Record<string, string>): Promise<Answer> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size) headers.cookie = this.cookieHeader;
    let body: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const url = path.startsWith('http') ? path : this.t.url + path;
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html);
    if (token) this.token = token[1]!;
    this.onPage(html);
    return { status: res.status, location: res.headers.get('location'), html, headers: res.headers, setCookies };
  }

  get(path: string) {
    return this.send('GET', path);
  }
}
