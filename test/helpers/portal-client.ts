import { FormClient, type Answer } from './form-client.ts';
import type { TestServer } from './server.ts';

export type { Answer } from './form-client.ts';

/** A customer's browser without a browser (FormClient): the CSRF cookie and the portal session. */
export class PortalClient extends FormClient {
  post(path: string, form: Record<string, string> = {}) {
    return this.send('POST', path, { _csrf: this.token, ...form });
  }

  /** Opens the portal's page, then asks for a sign-in link for `email`. */
  async askForLink(accountId: string, email: string, mode?: 'test'): Promise<Answer> {
    await this.get(`/portal/${accountId}${mode ? '?mode=test' : ''}`);
    return this.post(`/portal/${accountId}`, { email, ...(mode ? { mode } : {}) });
  }

  /** Follows a sign-in link (an absolute URL): the 303 to the overview with the session cookie. */
  async follow(url: string): Promise<Answer> {
    const u = new URL(url);
    return this.get(u.pathname + u.search);
  }
}

/** A one-time portal link made by the merchant (POST /v1/customers/:id/portal-sessions). */
export async function merchantLink(t: TestServer, key: string, customerId: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', `/v1/customers/${customerId}/portal-sessions`, { key, body });
  if (res.status !== 200) throw new Error(`portal session: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { url: string; expires_at: number; customer_id: string; livemode: boolean; return_url: string | null };
}

/** A client signed in to the customer's portal through a merchant link. */
export async function signedIn(t: TestServer, key: string, customerId: string, headers: Record<string, string> = {}): Promise<PortalClient> {
  const c = new PortalClient(t, headers);
  const res = await c.follow((await merchantLink(t, key, customerId)).url);
  if (res.status !== 303) throw new Error(`sign-in: ${res.status}`);
  return c;
}

/** The text a person reads on a page: tags, the CSRF token and whitespace left out. */
export const pageText = (html: string) =>
  html
    .replace(/<head>[\s\S]*<\/head>/, '')
    .replace(/<input type="hidden" name="_csrf" value="[^"]*">/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
    .replace(/\s+/g, ' ')
    .trim();
