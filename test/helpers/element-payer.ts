import { createSession } from './factories.ts';
import { Payer } from './payer.ts';
import type { TestServer } from './server.ts';
import type { StripeStandIn } from './stripe/api.ts';
import { eventually } from './wait.ts';

/**
 * A payer of a Payment Element page without a browser: opens the page (which creates the intent),
 * presses Pay (prepare), then does what Stripe.js does, straight at the stand-in API (the card goes
 * there, never to the service), and comes back through the return URL.
 */
export class ElementPayer extends Payer {
  csrf = '';
  clientSecret = '';
  intentId = '';
  readonly sessionId: string;
  constructor(t: TestServer, sessionId: string) {
    super(t);
    this.sessionId = sessionId;
  }

  async open() {
    const page = await this.get(`/checkout/${this.sessionId}`);
    this.csrf = /data-csrf="([^"]+)"/.exec(page.html)?.[1] ?? '';
    this.clientSecret = /data-client-secret="([^"]+)"/.exec(page.html)?.[1] ?? '';
    this.intentId = this.clientSecret.split('_secret_')[0] ?? '';
    return page;
  }

  /** Pay pressed on a page without a token: the attempt is recorded and the browser confirms (as pages before server-side confirmation did). */
  async prepare(email = 'payer@example.com') {
    return this.preparePost({ email });
  }

  /** Pay pressed on a page finalized on the server: the id of the confirmation token Stripe.js made of the card. */
  async prepareWithToken(token: string, email = 'payer@example.com') {
    return this.preparePost({ email, confirmation_token: token });
  }

  private async preparePost(fields: Record<string, string>) {
    const res = await this.send('POST', `/checkout/${this.sessionId}/element/prepare`, { _csrf: this.csrf, ...fields });
    return { status: res.status, body: JSON.parse(res.html || '{}') as Record<string, unknown> };
  }

  back() {
    const q = new URLSearchParams({ payment_intent: this.intentId, payment_intent_client_secret: this.clientSecret, redirect_status: 'succeeded' });
    return this.get(`/checkout/${this.sessionId}/element/return?${q}`);
  }
}

/** A live session, its page opened and Pay pressed: ready for the card at the stand-in. */
export async function preparedLiveSession(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const cs = await createSession(t, key, body);
  const payer = new ElementPayer(t, cs.id);
  await payer.open();
  const prepared = await payer.prepare();
  if (prepared.status !== 200) throw new Error(`prepare: ${prepared.status} ${JSON.stringify(prepared.body)}`);
  return { cs, payer };
}

export const sessionRow = async (t: TestServer, id: string) => (await t.sql`select * from checkout_sessions where id = ${id}`)[0]!;
export const paymentsOf = (t: TestServer, sessionId: string) => t.sql`select * from payments where checkout_session_id = ${sessionId} order by id`;
export const eventTypes = async (t: TestServer, objectId: string) =>
  (await t.sql<{ type: string }[]>`select type from events where data->'object'->>'id' = ${objectId} order by id`).map((r) => r.type);

/** Waits until the stand-in's events of `type` were all answered by the service. */
export async function delivered(api: StripeStandIn, type: string, n = 1) {
  await eventually(async () => api.eventsOf(type).length >= n && api.eventsOf(type).every((e) => e.status !== null), 5000);
}
