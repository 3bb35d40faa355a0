import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { STRIPE_JS_SOURCE } from './js.ts';
import { DIGITS } from '../cards.ts';

/**
 * A local stand-in for Stripe's API (tests only): stripe-node reaches it through STRIPE_API_URL.
 * It speaks Stripe's wire format (form-encoded requests with Idempotency-Key, JSON answers shaped
 * as the `stripe` package's types), keeps customers, payment intents, charges, refunds and
 * disputes in memory, and sends the events it causes to `webhookUrl`, signed with Stripe's
 * `t=…,v1=…` scheme (stripe.webhooks.generateTestHeaderString). The Stripe.js stand-in (js.ts,
 * served at /v3/) confirms intents here with the card number: the card never goes to the service.
 */

type Obj = Record<string, any>;

export interface StandInKeys {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
}

export const LIVE_KEYS: StandInKeys = { secretKey: 'sk_live_standin', publishableKey: 'pk_live_standin', webhookSecret: 'whsec_live_standin' };
export const TEST_KEYS: StandInKeys = { secretKey: 'sk_test_standin', publishableKey: 'pk_test_standin', webhookSecret: 'whsec_test_standin' };

/** The env of a service whose live mode (and, with `test`, test mode) runs on this stand-in. */
export function stripeEnv(api: StripeStandIn, opts: { test?: boolean; live?: boolean } = {}): Record<string, string> {
  const env: Record<string, string> = { STRIPE_API_URL: api.url, STRIPE_JS_URL: `${api.url}/v3/` };
  if (opts.live !== false) Object.assign(env, { STRIPE_SECRET_KEY: LIVE_KEYS.secretKey, STRIPE_PUBLISHABLE_KEY: LIVE_KEYS.publishableKey, STRIPE_WEBHOOK_SECRET: LIVE_KEYS.webhookSecret });
  if (opts.test) Object.assign(env, { STRIPE_TEST_SECRET_KEY: TEST_KEYS.secretKey, STRIPE_TEST_PUBLISHABLE_KEY: TEST_KEYS.publishableKey, STRIPE_TEST_WEBHOOK_SECRET: TEST_KEYS.webhookSecret });
  return env;
}

/** Stripe's test cards, as the stand-in plays them. */
const DECLINES: Record<string, { code: string; decline_code?: string; message: string }> = {
  [DIGITS.declined]: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  [DIGITS.insufficientFunds]: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  [DIGITS.expired]: { code: 'expired_card', message: 'Your card has expired.' },
  [DIGITS.incorrectCvc]: { code: 'incorrect_cvc', message: 'Your card\'s security code is incorrect.' },
};
const THREE_D_SECURE = new Set([DIGITS.threeDS, DIGITS.threeDSAlt]);
/**
 * Saved cards, charged off-session: Stripe's "attaches but charges fail" card as the simulator plays
 * it (the payment with the cardholder present succeeds, every off-session charge is declined), and
 * the card that always asks for authentication (an off-session charge answers authentication_required).
 */
const OFF_SESSION_DECLINES = new Set([DIGITS.laterDeclines]);
const ALWAYS_AUTHENTICATE = new Set([DIGITS.alwaysAuthenticate]);

/**
 * Stripe's international test cards (docs.stripe.com/testing, "International cards"): the issuing
 * country Stripe reports for them (payment_method.card.country); every other test card is a US card.
 */
const COUNTRIES: Record<string, string> = {
  [DIGITS.brazil]: 'BR',
  [DIGITS.canada]: 'CA',
  [DIGITS.france]: 'FR',
  [DIGITS.germany]: 'DE',
  [DIGITS.nigeria]: 'NG',
  [DIGITS.unitedKingdom]: 'GB',
};
export const countryOf = (card: string): string => COUNTRIES[card] ?? 'US';

/** The stand-in's fingerprint of a card number: stable, 16 characters like Stripe's, never the number. */
export const fingerprintOf = (card: string): string => createHmac('sha256', 'stripe-standin-fingerprint').update(card).digest('base64url').slice(0, 16);

const brandOf = (card: string) => (card.startsWith('4') ? 'visa' : card.startsWith('5') ? 'mastercard' : 'unknown');
/** What Stripe shows of a card: brand, last four, expiry, fingerprint and country, never the number. */
const cardView = (card: string) => ({ brand: brandOf(card), last4: card.slice(-4), exp_month: 12, exp_year: 2034, funding: 'credit', fingerprint: fingerprintOf(card), country: countryOf(card) });

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface SentEvent {
  event: Obj;
  status: number | null;
}

const now = () => Math.floor(Date.now() / 1000);
const rid = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** `a[b][c]=v` form fields as nested objects (`expand[0]=x` as an object keyed 0; read with list()). */
export function parseForm(body: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.replace(/\]/g, '').split('[');
    let at = out;
    parts.forEach((p, i) => {
      if (i === parts.length - 1) at[p] = value;
      else at = at[p] ??= {};
    });
  }
  return out;
}
const list = (v: unknown): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : Object.values(v as Obj).map(String));

export class StripeStandIn {
  url = '';
  /** Where events go (the service's /processor/stripe/webhook); unset: kept in `events` only. */
  webhookUrl: string | null = null;
  /** true: events wait in `held` until release() (to order them against the page's return). */
  holdEvents = false;
  /** 'error': every API call answers 500; 'reset': connections are dropped. null: up. */
  down: 'error' | 'reset' | null = null;
  readonly requests: ReceivedRequest[] = [];
  readonly events: SentEvent[] = [];
  held: Obj[] = [];
  readonly customers = new Map<string, Obj>();
  readonly intents = new Map<string, Obj>();
  readonly charges = new Map<string, Obj>();
  readonly refunds = new Map<string, Obj>();
  readonly disputes = new Map<string, Obj>();
  readonly paymentMethods = new Map<string, Obj>();
  /** The card number behind each saved payment method: Stripe's side, never the service's. */
  private readonly savedCards = new Map<string, string>();
  /** Confirmation tokens (Stripe.js createConfirmationToken), and the card number behind each. */
  readonly confirmationTokens = new Map<string, Obj>();
  private readonly tokenCards = new Map<string, string>();
  /** Refunds created from now on stay pending until settleRefund(). */
  refundsPending = false;
  private readonly idempotent = new Map<string, { status: number; body: Obj }>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly stripe = new Stripe('sk_test_unused');

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private livemodeOf(auth: string | undefined): boolean | null {
    const key = auth?.replace(/^Bearer /, '') ?? '';
    if (key === LIVE_KEYS.secretKey || key === LIVE_KEYS.publishableKey) return true;
    if (key === TEST_KEYS.secretKey || key === TEST_KEYS.publishableKey) return false;
    return null;
  }

  // --- events -------------------------------------------------------------------------------

  /** Makes a Stripe event of `object` and sends it (or holds it). */
  emit(type: string, object: Obj): Obj {
    const event = { id: rid('evt'), object: 'event', api_version: Stripe.API_VERSION, created: now(), type, livemode: object.livemode, data: { object: structuredClone(object) }, pending_webhooks: 1, request: null };
    if (this.holdEvents) this.held.push(event);
    else void this.deliver(event);
    return event;
  }

  /** Sends one event, signed with its mode's secret (or `secret`); answers the status. */
  async deliver(event: Obj, secret?: string): Promise<number | null> {
    const sent: SentEvent = { event, status: null };
    this.events.push(sent);
    if (!this.webhookUrl) return null;
    const payload = JSON.stringify(event);
    const header = this.stripe.webhooks.generateTestHeaderString({ payload, secret: secret ?? (event.livemode ? LIVE_KEYS : TEST_KEYS).webhookSecret });
    try {
      const res = await fetch(this.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header }, body: payload });
      await res.text();
      sent.status = res.status;
    } catch {
      sent.status = 0;
    }
    return sent.status;
  }

  /** Sends the held events, in order (or `order` of their indexes), and stops holding. */
  async release(): Promise<void> {
    const held = this.held;
    this.held = [];
    this.holdEvents = false;
    for (const e of held) await this.deliver(e);
  }

  eventsOf(type: string): SentEvent[] {
    return this.events.filter((e) => e.event.type === type);
  }

  // --- test controls -----------------------------------------------------------------------

  /** Confirms an intent with a card number, as the Stripe.js stand-in does. */
  confirm(id: string, card: string): Obj {
    const pi = this.intents.get(id);
    if (!pi) throw new Error(`no intent ${id}`);
    if (pi.status === 'canceled' || pi.status === 'succeeded' || pi.status === 'requires_capture') return pi;
    if (DECLINES[card]) return this.decline(pi, DECLINES[card]!);
    if (THREE_D_SECURE.has(card)) {
      pi.pending_card = card;
      pi.status = 'requires_action';
      pi.next_action = { type: 'redirect_to_url', redirect_to_url: { url: `${this.url}/3ds/${id}`, return_url: null } };
      return pi;
    }
    return this.succeed(pi, card);
  }

  /** The payer passed or failed the challenge of a 3-D Secure card. */
  authenticate(id: string, outcome: 'complete' | 'fail'): Obj {
    const pi = this.intents.get(id)!;
    if (pi.status !== 'requires_action') return pi;
    pi.next_action = null;
    if (outcome === 'complete') return this.succeed(pi, pi.pending_card);
    return this.decline(pi, { code: 'payment_intent_authentication_failure', message: 'We are unable to authenticate your payment method.' });
  }

  /** Leaves an intent processing (a slow bank), as confirm does before the answer. */
  setProcessing(id: string): void {
    this.intents.get(id)!.status = 'processing';
  }

  /**
   * The bank said yes: with capture_method manual the charge is only authorised (the intent
   * requires_capture, payment_intent.amount_capturable_updated) until capture(); else it succeeds.
   */
  private succeed(pi: Obj, card: string): Obj {
    const manual = pi.capture_method === 'manual';
    const charge = {
      id: rid('ch'), object: 'charge', amount: pi.amount, amount_refunded: 0, amount_captured: manual ? 0 : pi.amount, captured: !manual, currency: pi.currency, created: now(),
      livemode: pi.livemode, paid: true, refunded: false, status: 'succeeded', payment_intent: pi.id, customer: pi.customer,
      metadata: {}, disputed: false, payment_method_details: { type: 'card', card: cardView(card) },
    };
    this.charges.set(charge.id, charge);
    // setup_future_usage: the card is kept as a reusable payment method (attached to the intent's customer, if any).
    const pm = pi.payment_method && this.paymentMethods.has(pi.payment_method) ? this.paymentMethods.get(pi.payment_method)! : this.savePaymentMethod(card, pi.livemode, pi.setup_future_usage ? pi.customer : null);
    Object.assign(pi, { latest_charge: charge.id, last_payment_error: null, payment_method: pm.id });
    delete pi.pending_card;
    if (manual) {
      Object.assign(pi, { status: 'requires_capture', amount_capturable: pi.amount });
      this.emit('payment_intent.amount_capturable_updated', this.view(pi));
      return pi;
    }
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount });
    this.emit('payment_intent.succeeded', this.view(pi));
    return pi;
  }

  /** Captures an authorisation (requires_capture): the intent succeeds. */
  capture(pi: Obj): Obj {
    const charge = this.charges.get(pi.latest_charge)!;
    Object.assign(charge, { captured: true, amount_captured: charge.amount });
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, amount_capturable: 0 });
    this.emit('payment_intent.succeeded', this.view(pi));
    return pi;
  }

  private savePaymentMethod(card: string, livemode: boolean, customer: string | null): Obj {
    const { funding: _f, ...shown } = cardView(card);
    const pm = { id: rid('pm'), object: 'payment_method', type: 'card', customer, livemode, created: now(), card: shown, metadata: {} };
    this.paymentMethods.set(pm.id, pm);
    this.savedCards.set(pm.id, card);
    return pm;
  }

  /**
   * PaymentIntents.create with confirm and off_session (a later part of a plan): the saved card is
   * charged with the cardholder absent. A decline answers 402 with the failed intent, as Stripe does.
   */
  private chargeOffSession(p: Obj, livemode: boolean): [number, Obj] {
    const pm = this.paymentMethods.get(p.payment_method);
    if (!pm || pm.livemode !== livemode) return this.missing('payment_method', p.payment_method ?? '');
    if (pm.customer !== p.customer) {
      return [400, { error: { type: 'invalid_request_error', code: 'payment_method_not_attached', message: 'The PaymentMethod must be attached to the customer.' } }];
    }
    const pid = rid('pi');
    const pi: Obj = {
      id: pid, object: 'payment_intent', amount: Number(p.amount), currency: p.currency, customer: p.customer, metadata: p.metadata ?? {},
      status: 'processing', client_secret: `${pid}_secret_${randomBytes(8).toString('hex')}`, last_payment_error: null, latest_charge: null,
      next_action: null, livemode, created: now(), canceled_at: null, cancellation_reason: null, amount_received: 0, capture_method: 'automatic',
      confirmation_method: 'automatic', payment_method: pm.id, payment_method_types: ['card'], off_session: true, setup_future_usage: null,
      description: p.description ?? null,
    };
    this.intents.set(pid, pi);
    const card = this.savedCards.get(pm.id)!;
    const decline = OFF_SESSION_DECLINES.has(card) ? DECLINES[DIGITS.declined]! : DECLINES[card];
    if (decline || ALWAYS_AUTHENTICATE.has(card)) {
      const err = decline ?? { code: 'authentication_required', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' };
      this.decline(pi, err);
      if (ALWAYS_AUTHENTICATE.has(card)) Object.assign(pi, { status: 'requires_payment_method' });
      return [402, { error: { type: 'card_error', ...err, payment_intent: this.view(pi) } }];
    }
    return [200, this.view(this.succeed(pi, card))];
  }

  /**
   * A server-side confirmation with a confirmation token ("finalize payments on the server"): the
   * token must be this mode's, unexpired and unused (it is used up by this call); capture_method
   * and return_url are taken from the call. A decline answers 402 with the failed intent, 3-D
   * Secure requires_action with next_action use_stripe_sdk (handled by stripe.handleNextAction).
   */
  private confirmWithToken(pi: Obj, p: Obj): [number, Obj] {
    const ct = this.confirmationTokens.get(p.confirmation_token);
    if (!ct || ct.livemode !== pi.livemode) return this.missing('confirmation_token', p.confirmation_token ?? '');
    if (ct.payment_intent || ct.setup_intent || ct.expires_at <= now()) {
      return [400, { error: { type: 'invalid_request_error', code: 'confirmation_token_already_used', message: 'This ConfirmationToken has already been used or has expired.', param: 'confirmation_token' } }];
    }
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(pi.status)) {
      return [400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `This PaymentIntent's status is ${pi.status}.` } }];
    }
    if ((ct.setup_future_usage ?? null) !== (pi.setup_future_usage ?? null)) {
      return [400, { error: { type: 'invalid_request_error', message: 'The ConfirmationToken setup_future_usage does not match the PaymentIntent.', param: 'confirmation_token' } }];
    }
    ct.payment_intent = pi.id;
    if (p.capture_method) pi.capture_method = p.capture_method;
    if (p.return_url) pi.return_url = p.return_url;
    this.confirm(pi.id, this.tokenCards.get(ct.id)!);
    if (pi.status === 'requires_action') pi.next_action = { type: 'use_stripe_sdk', use_stripe_sdk: {} };
    const expand = list(p.expand);
    if (pi.status === 'requires_payment_method' && pi.last_payment_error) {
      return [402, { error: { ...pi.last_payment_error, payment_intent: this.view(pi, expand) } }];
    }
    return [200, this.view(pi, expand)];
  }

  /** Requests that confirmed intent `id` (in the browser or on the server). */
  confirmsOf(id: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path.startsWith(`/v1/payment_intents/${id}/confirm`));
  }

  private decline(pi: Obj, err: { code: string; decline_code?: string; message: string }): Obj {
    const charge = { id: rid('ch'), object: 'charge', amount: pi.amount, currency: pi.currency, status: 'failed', payment_intent: pi.id, livemode: pi.livemode, created: now() };
    this.charges.set(charge.id, charge);
    Object.assign(pi, { status: 'requires_payment_method', latest_charge: charge.id, last_payment_error: { type: 'card_error', charge: charge.id, ...err } });
    delete pi.pending_card;
    this.emit('payment_intent.payment_failed', this.view(pi));
    return pi;
  }

  /** Settles a pending refund (refundsPending) as `status`, with its events. */
  settleRefund(id: string, status: 'succeeded' | 'failed' = 'succeeded'): void {
    const r = this.refunds.get(id)!;
    r.status = status;
    if (status === 'failed') r.failure_reason = 'expired_or_canceled_card';
    this.refundEvents(r);
  }

  private refundEvents(r: Obj): void {
    if (r.status === 'succeeded') {
      const charge = this.charges.get(r.charge)!;
      charge.amount_refunded += r.amount;
      charge.refunded = charge.amount_refunded >= charge.amount;
      this.emit('charge.refunded', charge);
    }
    this.emit(r.status === 'failed' ? 'refund.failed' : 'refund.updated', r);
  }

  /** The cardholder disputes the charge of an intent: charge.dispute.created. */
  openDispute(intentId: string, reason = 'fraudulent'): Obj {
    const pi = this.intents.get(intentId)!;
    const d = {
      id: rid('dp'), object: 'dispute', amount: pi.amount, currency: pi.currency, charge: pi.latest_charge, payment_intent: pi.id,
      created: now(), livemode: pi.livemode, reason, status: 'needs_response', is_charge_refundable: false, metadata: {}, evidence: {},
      evidence_details: { due_by: now() + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
    };
    this.disputes.set(d.id, d);
    this.emit('charge.dispute.created', d);
    return d;
  }

  /** The bank decides a dispute under review: charge.dispute.closed. */
  decideDispute(id: string, status: 'won' | 'lost'): void {
    const d = this.disputes.get(id)!;
    d.status = status;
    this.emit('charge.dispute.closed', d);
  }

  /** Requests the service (or anyone) made whose raw body or query contains `needle`. */
  requestsContaining(needle: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.body.includes(needle) || r.path.includes(needle));
  }

  // --- the API -----------------------------------------------------------------------------

  /** The intent as the API answers it (latest_charge expanded when asked). */
  private view(pi: Obj, expand: string[] = []): Obj {
    const { pending_card: _card, ...out } = pi;
    if (expand.includes('latest_charge') && pi.latest_charge) out.latest_charge = this.charges.get(pi.latest_charge) ?? null;
    return out;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const u = new URL(req.url ?? '/', 'http://x');
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', 'authorization, content-type');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    if (u.pathname === '/v3/' || u.pathname === '/v3') {
      res.writeHead(200, { 'content-type': 'application/javascript; charset=utf-8' }).end(STRIPE_JS_SOURCE);
      return;
    }
    if (this.down === 'reset') return void req.socket.destroy();
    if (this.down === 'error') return this.send(res, 500, { error: { type: 'api_error', message: 'The stand-in is down.' } });
    const livemode = this.livemodeOf(req.headers.authorization);
    if (livemode === null) return this.send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    const params = req.method === 'GET' ? parseForm(u.search.slice(1)) : parseForm(body);
    const key = req.headers['idempotency-key'] as string | undefined;
    const idemKey = key ? `${livemode}:${req.method}:${u.pathname}:${key}` : null;
    if (idemKey && this.idempotent.has(idemKey)) {
      const prior = this.idempotent.get(idemKey)!;
      return this.send(res, prior.status, prior.body);
    }
    const [status, answer] = this.route(req.method ?? 'GET', u.pathname, params, livemode, req.headers.authorization ?? '');
    if (idemKey && req.method === 'POST' && status < 500) this.idempotent.set(idemKey, { status, body: answer });
    this.send(res, status, answer);
  }

  private send(res: ServerResponse, status: number, body: Obj): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': rid('req') }).end(JSON.stringify(body));
  }

  private missing(what: string, id: string): [number, Obj] {
    return [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${id}'`, param: 'id' } }];
  }

  private route(method: string, path: string, p: Obj, livemode: boolean, auth: string): [number, Obj] {
    const publishable = auth.includes('pk_');
    const seg = path.split('/').filter(Boolean); // ['v1', resource, id?, action?]
    const [, resource, id, action] = seg;
    const mine = <T extends Obj>(m: Map<string, T>, k: string | undefined) => (k && m.get(k)?.livemode === livemode ? m.get(k) : undefined);
    const browserCall = (resource === 'payment_intents' && (action === 'confirm' || action === 'authenticate')) || (resource === 'confirmation_tokens' && method === 'POST' && !id);
    if (publishable && !browserCall) {
      return [403, { error: { type: 'invalid_request_error', message: 'This API call cannot be made with a publishable API key.' } }];
    }
    if (resource === 'customers' && method === 'POST' && !id) {
      const c = { id: rid('cus'), object: 'customer', email: p.email ?? null, name: p.name ?? null, metadata: p.metadata ?? {}, created: now(), livemode };
      this.customers.set(c.id, c);
      return [200, c];
    }
    if (resource === 'payment_methods') {
      const pm = mine(this.paymentMethods, id);
      if (!pm) return this.missing('payment_method', id ?? '');
      if (method === 'GET' && !action) return [200, pm];
      if (method === 'POST' && action === 'attach') {
        if (!mine(this.customers, p.customer)) return this.missing('customer', p.customer ?? '');
        if (pm.customer && pm.customer !== p.customer) {
          return [400, { error: { type: 'invalid_request_error', code: 'payment_method_already_attached', message: 'The payment method is attached to another customer.' } }];
        }
        pm.customer = p.customer;
        return [200, pm];
      }
    }
    if (resource === 'confirmation_tokens') {
      if (method === 'POST' && !id) {
        // Stripe.js's createConfirmationToken: the card from the element, as a single-use token.
        const card = String(p.payment_method_data?.card?.number ?? '').replace(/\D/g, '');
        if (!/^\d{12,19}$/.test(card)) return [400, { error: { type: 'card_error', code: 'incorrect_number', message: 'Your card number is incorrect.', param: 'number' } }];
        const ct = {
          id: rid('ctoken'), object: 'confirmation_token', created: now(), expires_at: now() + 12 * 3600, livemode, payment_intent: null, setup_intent: null,
          return_url: p.return_url ?? null, setup_future_usage: p.setup_future_usage ?? null, use_stripe_sdk: true, shipping: null, mandate_data: null,
          payment_method_preview: { type: 'card', billing_details: { email: p.payment_method_data?.billing_details?.email ?? null, name: null, phone: null, address: null }, card: cardView(card) },
        };
        this.confirmationTokens.set(ct.id, ct);
        this.tokenCards.set(ct.id, card);
        return [200, ct];
      }
      const ct = mine(this.confirmationTokens, id);
      if (!ct) return this.missing('confirmation_token', id ?? '');
      if (method === 'GET' && !action) return [200, ct];
    }
    if (resource === 'payment_intents' && method === 'GET' && !id) {
      const data = [...this.intents.values()].filter((pi) => pi.livemode === livemode && (!p.customer || pi.customer === p.customer)).reverse().map((pi) => this.view(pi));
      return [200, { object: 'list', data, has_more: false, url: '/v1/payment_intents' }];
    }
    if (resource === 'payment_intents' && method === 'POST' && !id && p.confirm === 'true' && p.off_session === 'true') {
      return this.chargeOffSession(p, livemode);
    }
    if (resource === 'payment_intents') {
      if (method === 'POST' && !id) {
        const pid = rid('pi');
        const pi = {
          id: pid, object: 'payment_intent', amount: Number(p.amount), currency: p.currency, customer: p.customer ?? null,
          metadata: p.metadata ?? {}, status: 'requires_payment_method', client_secret: `${pid}_secret_${randomBytes(8).toString('hex')}`,
          automatic_payment_methods: p.automatic_payment_methods ? { enabled: p.automatic_payment_methods.enabled === 'true' } : null,
          last_payment_error: null, latest_charge: null, next_action: null, livemode, created: now(), canceled_at: null, cancellation_reason: null,
          amount_received: 0, capture_method: 'automatic', confirmation_method: 'automatic', payment_method: null, payment_method_types: ['card'],
          setup_future_usage: p.setup_future_usage ?? null,
        };
        this.intents.set(pid, pi);
        return [200, this.view(pi)];
      }
      const pi = mine(this.intents, id);
      if (!pi) return this.missing('payment_intent', id ?? '');
      if (method === 'GET' && !action) return [200, this.view(pi, list(p.expand))];
      if (method === 'POST' && action === 'cancel') {
        if (pi.status === 'succeeded' || pi.status === 'processing' || pi.status === 'canceled') {
          return [400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `This PaymentIntent's status is ${pi.status}.` } }];
        }
        Object.assign(pi, { status: 'canceled', canceled_at: now(), cancellation_reason: p.cancellation_reason ?? null, next_action: null });
        this.emit('payment_intent.canceled', this.view(pi));
        return [200, this.view(pi)];
      }
      if (method === 'POST' && action === 'capture') {
        if (pi.status !== 'requires_capture') {
          return [400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `This PaymentIntent could not be captured because it has a status of ${pi.status}.` } }];
        }
        return [200, this.view(this.capture(pi))];
      }
      if (method === 'POST' && !action) {
        // An update: only what the service changes (capture_method before the browser confirms).
        if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(pi.status)) {
          return [400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `This PaymentIntent's status is ${pi.status}.` } }];
        }
        if (p.capture_method) pi.capture_method = p.capture_method;
        return [200, this.view(pi)];
      }
      if (method === 'POST' && action === 'confirm' && p.confirmation_token !== undefined && !publishable) {
        return this.confirmWithToken(pi, p);
      }
      if (method === 'POST' && (action === 'confirm' || action === 'authenticate')) {
        if (publishable && p.client_secret !== pi.client_secret) return [400, { error: { type: 'invalid_request_error', message: 'client_secret does not match' } }];
        if (action === 'authenticate') return [200, this.view(this.authenticate(pi.id, p.outcome === 'fail' ? 'fail' : 'complete'))];
        const card = String(p.payment_method_data?.card?.number ?? p.test_card ?? '').replace(/\D/g, '');
        if (pi.status === 'canceled') return [400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: 'This PaymentIntent was canceled.' } }];
        return [200, this.view(this.confirm(pi.id, card))];
      }
    }
    if (resource === 'refunds') {
      if (method === 'POST' && !id) {
        const pi = mine(this.intents, p.payment_intent);
        if (!pi || pi.status !== 'succeeded') return [400, { error: { type: 'invalid_request_error', code: 'charge_not_found', message: 'This PaymentIntent has no successful charge.' } }];
        const charge = this.charges.get(pi.latest_charge)!;
        const amount = p.amount ? Number(p.amount) : charge.amount - charge.amount_refunded;
        if (amount > charge.amount - charge.amount_refunded) return [400, { error: { type: 'invalid_request_error', code: 'amount_too_large', message: 'Refund amount is greater than unrefunded amount on charge.' } }];
        const r = { id: rid('re'), object: 'refund', amount, currency: pi.currency, charge: charge.id, payment_intent: pi.id, metadata: p.metadata ?? {}, status: this.refundsPending ? 'pending' : 'succeeded', failure_reason: null, created: now(), livemode };
        this.refunds.set(r.id, r);
        this.emit('refund.created', r);
        if (r.status === 'succeeded') this.refundEvents(r);
        return [200, r];
      }
      if (method === 'GET' && !id) {
        const data = [...this.refunds.values()].filter((r) => r.livemode === livemode && (!p.payment_intent || r.payment_intent === p.payment_intent)).reverse();
        return [200, { object: 'list', data, has_more: false, url: '/v1/refunds' }];
      }
      const r = mine(this.refunds, id);
      if (!r) return this.missing('refund', id ?? '');
      if (method === 'GET') return [200, r];
      if (method === 'POST' && action === 'cancel') {
        if (r.status !== 'pending' && r.status !== 'requires_action') return [400, { error: { type: 'invalid_request_error', code: 'charge_already_refunded', message: 'This refund cannot be canceled.' } }];
        r.status = 'canceled';
        this.emit('refund.updated', r);
        return [200, r];
      }
    }
    if (resource === 'disputes') {
      if (method === 'GET' && !id) {
        const gte = p.created?.gte ? Number(p.created.gte) : 0;
        let data = [...this.disputes.values()].filter((d) => d.livemode === livemode && d.created >= gte).reverse();
        if (p.starting_after) data = data.slice(data.findIndex((d) => d.id === p.starting_after) + 1);
        const limit = Number(p.limit ?? 10);
        return [200, { object: 'list', data: data.slice(0, limit), has_more: data.length > limit, url: '/v1/disputes' }];
      }
      const d = mine(this.disputes, id);
      if (!d) return this.missing('dispute', id ?? '');
      if (method === 'GET') return [200, d];
      if (method === 'POST' && action === 'close') {
        d.status = 'lost';
        this.emit('charge.dispute.closed', d);
        return [200, d];
      }
      if (method === 'POST' && !action) {
        Object.assign(d.evidence, p.evidence ?? {});
        if (p.submit === 'true') {
          d.status = 'under_review';
          d.evidence_details.submission_count++;
          this.emit('charge.dispute.updated', d);
        }
        return [200, d];
      }
    }
    return [404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } }];
  }
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  return new StripeStandIn().start();
}
