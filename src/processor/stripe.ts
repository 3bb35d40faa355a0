import Stripe from 'stripe';
import type { StripeKeys } from '../config.ts';
import type { Processor, RefundLookup } from './types.ts';
import { asDispute, asRefund, attemptOf, declineOf, idOf, savedChargeOf } from './stripe-objects.ts';

/**
 * One try of a Stripe call. With STRIPE_MAX_RETRIES retries (and stripe-node's backoff of at most
 * a few seconds) a call gives up in about 35 s, well under SETTLE_IN_FLIGHT_AFTER_MS (60 s): the
 * sweeper never asks about an attempt whose request is still waiting on Stripe.
 */
export const STRIPE_TIMEOUT_MS = 10_000;
export const STRIPE_MAX_RETRIES = 2;

const isMissing = (err: unknown) => err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing';

/** A Stripe client for STRIPE_API_URL (tests point it at a local stand-in). */
export function stripeClient(secretKey: string, apiUrl: string): Stripe {
  const u = new URL(apiUrl);
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(secretKey, {
    host: u.hostname,
    port: u.port || (protocol === 'http' ? 80 : 443),
    protocol,
    maxNetworkRetries: STRIPE_MAX_RETRIES,
    timeout: STRIPE_TIMEOUT_MS,
    telemetry: false,
  });
}

/**
 * The Stripe processor (issue 12, docs/decisions.md "Stripe processor"): one per mode with its
 * keys. Every create carries an idempotency key derived from our id, so a retry (ours or
 * stripe-node's) never makes a second customer, intent or refund. An outage (connection refused,
 * timeout, 5xx) is thrown: the caller leaves its record in flight or pending for the sweep.
 */
export function createStripeProcessor(keys: StripeKeys, apiUrl: string): Processor {
  const stripe = stripeClient(keys.secretKey, apiUrl);

  async function findRefund(reference: string, intentId: string | null): Promise<Stripe.Refund | undefined> {
    if (!intentId) return undefined;
    for await (const r of stripe.refunds.list({ payment_intent: intentId, limit: 100 })) {
      if (r.metadata?.refund_id === reference) return r;
    }
    return undefined;
  }

  return {
    name: 'stripe',
    collectsCard: 'element',
    publishableKey: keys.publishableKey,
    async createCustomer({ reference, email, name }) {
      const c = await stripe.customers.create(
        { email, ...(name ? { name } : {}), metadata: { customer_id: reference } },
        { idempotencyKey: `customer-${reference}` },
      );
      return { id: c.id };
    },
    async createPaymentIntent({ reference, amount, currency, customer, saveCard }) {
      // The customer is part of the key: Stripe refuses a key reused with other parameters, and the
      // customer's twin may be filled in between two calls (the orphan intent is never confirmed).
      const pi = await stripe.paymentIntents.create(
        {
          amount,
          currency,
          ...(customer ? { customer } : {}),
          automatic_payment_methods: { enabled: true },
          // The first part of an installment plan: Stripe keeps the card for the later, off-session
          // parts (attached to the plan's customer before the first of them: chargeSavedCard).
          ...(saveCard ? { setup_future_usage: 'off_session' as const } : {}),
          metadata: { checkout_session_id: reference },
        },
        { idempotencyKey: `intent-${reference}${customer ? `-${customer}` : ''}` },
      );
      return { id: pi.id, clientSecret: pi.client_secret };
    },
    async paymentIntentSecret(intentId) {
      return (await stripe.paymentIntents.retrieve(intentId)).client_secret;
    },
    async cancelPaymentIntent(intentId) {
      const pi = await stripe.paymentIntents.retrieve(intentId);
      if (pi.status === 'canceled') return true;
      if (pi.status === 'succeeded' || pi.status === 'processing') return false;
      try {
        await stripe.paymentIntents.cancel(intentId, { cancellation_reason: 'abandoned' });
        return true;
      } catch (err) {
        // Confirmed meanwhile: its outcome comes by event or the sweep.
        if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'payment_intent_unexpected_state') return false;
        throw err;
      }
    },
    async capturePayment(intentId) {
      const pi = await stripe.paymentIntents.retrieve(intentId);
      if (pi.status === 'requires_capture') return (await stripe.paymentIntents.capture(intentId, {}, { idempotencyKey: `capture-${intentId}` })).status === 'succeeded' ? 'captured' : 'not_found';
      return pi.status === 'succeeded' ? 'captured' : pi.status === 'canceled' ? 'voided' : 'not_found';
    },
    async setManualCapture(intentId) {
      await stripe.paymentIntents.update(intentId, { capture_method: 'manual' });
    },
    async cardOfToken(token) {
      let ct: Stripe.ConfirmationToken;
      try {
        ct = await stripe.confirmationTokens.retrieve(token);
      } catch (err) {
        // Unknown in this mode (or another mode's): the page makes a new one.
        if (err instanceof Stripe.errors.StripeInvalidRequestError) return { status: 'invalid' as const };
        throw err;
      }
      // Used already (it confirmed an intent) or expired: Stripe would refuse it.
      if (ct.payment_intent || ct.setup_intent || (ct.expires_at !== null && ct.expires_at * 1000 <= Date.now())) return { status: 'invalid' as const };
      const card = ct.payment_method_preview?.card;
      return {
        status: 'ok' as const,
        card: { brand: card?.brand ?? null, last4: card?.last4 ?? null, fingerprint: card?.fingerprint ?? null, country: card?.country ?? null },
      };
    },
    async confirmWithToken(intentId, attempt, token, { captureLater, returnUrl }) {
      try {
        const pi = await stripe.paymentIntents.confirm(
          intentId,
          {
            confirmation_token: token,
            // Explicit either way: an earlier attempt of the same intent held for review left it manual.
            capture_method: captureLater ? 'manual' : 'automatic',
            return_url: returnUrl,
            expand: ['latest_charge'],
          },
          { idempotencyKey: `confirm-${attempt}` },
        );
        const answer = attemptOf(pi);
        return pi.status === 'requires_action' ? { ...answer, clientSecret: pi.client_secret } : answer;
      } catch (err) {
        // A decline of a server-side confirmation is a card error (402) carrying the failed intent.
        if (err instanceof Stripe.errors.StripeCardError) {
          const raw = err.raw as { payment_intent?: { latest_charge?: string | { id: string } | null } } | undefined;
          return { status: 'declined' as const, ...declineOf(err), charge: idOf(raw?.payment_intent?.latest_charge) || null };
        }
        // Refused for good (the token was used meanwhile, does not fit the intent): nothing was charged.
        if (err instanceof Stripe.errors.StripeInvalidRequestError) return { status: 'not_found' as const };
        throw err;
      }
    },
    async voidPayment(intentId) {
      const pi = await stripe.paymentIntents.retrieve(intentId);
      if (pi.status === 'requires_capture') await stripe.paymentIntents.cancel(intentId, { cancellation_reason: 'fraudulent' }, { idempotencyKey: `void-${intentId}` });
      else return pi.status === 'succeeded' ? 'captured' : pi.status === 'canceled' ? 'voided' : 'not_found';
      return 'voided';
    },
    confirmPaymentIntent() {
      return Promise.reject(new Error('the Stripe processor collects the card in the browser (Payment Element): it confirms with a confirmation token (confirmWithToken)'));
    },
    completeAuthentication() {
      return Promise.reject(new Error('the Stripe processor runs 3-D Secure in the browser: no server-side completion'));
    },
    async chargeSavedCard({ reference, again, customer, paymentMethod, amount, currency, description }) {
      if (!customer) throw new Error('a Stripe off-session charge needs the customer the card is saved on');
      // Asked again after a crash: the charge made for this reference, if Stripe has it (an
      // idempotency key is only kept for 24 hours), is answered instead of charging again. A first
      // call (a new payment id) cannot have one, so the customer's intents are not walked then.
      if (again) {
        for await (const pi of stripe.paymentIntents.list({ customer, limit: 100 })) {
          if (pi.metadata?.payment_id === reference) return savedChargeOf(pi);
        }
      }
      // A card saved without a customer (the first part's intent had none) is attached before its first reuse.
      const pm = await stripe.paymentMethods.retrieve(paymentMethod);
      if (idOf(pm.customer) !== customer) await stripe.paymentMethods.attach(paymentMethod, { customer });
      try {
        const pi = await stripe.paymentIntents.create(
          {
            amount,
            currency,
            customer,
            payment_method: paymentMethod,
            off_session: true,
            confirm: true,
            ...(description ? { description } : {}),
            metadata: { payment_id: reference },
          },
          { idempotencyKey: `charge-${reference}` },
        );
        return savedChargeOf(pi);
      } catch (err) {
        // A decline off-session is a card error carrying the failed intent (402).
        if (err instanceof Stripe.errors.StripeCardError) {
          const raw = err.raw as { payment_intent?: { id?: string } } | undefined;
          return { status: 'declined', ...declineOf(err), intentId: raw?.payment_intent?.id ?? null };
        }
        throw err;
      }
    },
    setupCard() {
      return Promise.reject(new Error('the Stripe processor collects cards in the browser (Payment Element): no server-side setup'));
    },
    completeSetupAuthentication() {
      return Promise.reject(new Error('the Stripe processor runs 3-D Secure in the browser: no server-side setup'));
    },
    async retrieveSetup() {
      return { status: 'not_found' as const };
    },
    async retrieveAttempt(intentId) {
      try {
        return attemptOf(await stripe.paymentIntents.retrieve(intentId, { expand: ['latest_charge'] }));
      } catch (err) {
        if (isMissing(err)) return { status: 'not_found' };
        throw err;
      }
    },
    async createRefund({ reference, intentId, attempt, amount }) {
      try {
        const r = await stripe.refunds.create(
          { payment_intent: intentId, amount, metadata: { refund_id: reference, payment_id: attempt } },
          { idempotencyKey: `refund-${reference}` },
        );
        return asRefund(r);
      } catch (err) {
        // Stripe refused it for good (already refunded, disputed there, …): a failed refund, not an outage.
        if (err instanceof Stripe.errors.StripeInvalidRequestError) return { status: 'failed', reason: err.code ?? 'declined' };
        throw err;
      }
    },
    async retrieveRefund(reference, intentId): Promise<RefundLookup> {
      const r = await findRefund(reference, intentId);
      return r ? asRefund(r) : { status: 'not_found' };
    },
    async cancelRefund(reference, intentId) {
      const r = await findRefund(reference, intentId);
      // Not at Stripe yet: nothing to cancel now; the refund stays pending (the caller says so).
      if (!r) return { status: 'pending' };
      if (r.status !== 'pending' && r.status !== 'requires_action') return asRefund(r);
      try {
        return asRefund(await stripe.refunds.cancel(r.id));
      } catch (err) {
        // Stripe cancels only refunds waiting on an action: the others settle on their own.
        if (err instanceof Stripe.errors.StripeInvalidRequestError) return asRefund(await stripe.refunds.retrieve(r.id));
        throw err;
      }
    },
    async listDisputes({ since, startingAfter, limit }) {
      // Stripe's order (newest first); the sync records every page, so the order does not matter to it.
      const page = await stripe.disputes.list({
        limit,
        ...(since ? { created: { gte: Math.floor(since.getTime() / 1000) } } : {}),
        ...(startingAfter ? { starting_after: startingAfter } : {}),
      });
      return page.data.map(asDispute);
    },
    async retrieveDispute(id) {
      try {
        return asDispute(await stripe.disputes.retrieve(id));
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async submitDisputeEvidence(id, evidence) {
      const d = await stripe.disputes.retrieve(id);
      if (!d.status.endsWith('needs_response')) return asDispute(d);
      return asDispute(await stripe.disputes.update(id, { evidence, submit: true }));
    },
    async closeDispute(id) {
      const d = await stripe.disputes.retrieve(id);
      if (!d.status.endsWith('needs_response')) return asDispute(d);
      return asDispute(await stripe.disputes.close(id));
    },
  };
}
