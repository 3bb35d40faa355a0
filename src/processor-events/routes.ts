import express, { Router, type Request, type Response } from 'express';
import type Stripe from 'stripe';
import { handleStripeEvent } from './service.ts';
import type { Services } from '../services.ts';

/** The path to register at Stripe (Developers → Webhooks), under PUBLIC_BASE_URL. */
export const STRIPE_WEBHOOK_PATH = '/processor/stripe/webhook';

/**
 * The mode an event claims, read from the unverified body only to pick the secret to verify it
 * with; the verified event must then say the same mode.
 */
function claimedLivemode(raw: Buffer): boolean | null {
  try {
    const v = (JSON.parse(raw.toString('utf8')) as { livemode?: unknown }).livemode;
    return typeof v === 'boolean' ? v : null;
  } catch {
    return null;
  }
}

const refuse = (res: Response, status: number, message: string) =>
  res.status(status).json({ error: { type: 'invalid_request_error', code: 'request_malformed', message } });

/**
 * POST /processor/stripe/webhook: Stripe's events, verified with stripe.webhooks.constructEvent
 * over the raw body and the mode's webhook secret (STRIPE_WEBHOOK_SECRET or
 * STRIPE_TEST_WEBHOOK_SECRET). Mounted before any JSON parser: the signature covers the bytes.
 */
export function stripeWebhookRouter(s: Services): Router {
  const r = Router();
  r.post(STRIPE_WEBHOOK_PATH, express.raw({ type: 'application/json', limit: '1mb' }), async (req: Request, res: Response) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const livemode = claimedLivemode(raw);
    const keys = livemode === null ? null : livemode ? s.config.stripe.live : s.config.stripe.test;
    const signature = req.get('stripe-signature');
    if (!keys || !signature) return refuse(res, 400, 'No Stripe account of this mode is configured, or the Stripe-Signature header is missing.');
    // stripe-node is loaded on the first event of a configured mode (src/compose.ts: not at start).
    const { default: StripeNode } = await import('stripe');
    let event: Stripe.Event;
    try {
      event = StripeNode.webhooks.constructEvent(raw, signature, keys.webhookSecret);
    } catch {
      req.log.warn({ livemode }, 'Stripe webhook with a bad signature refused');
      return refuse(res, 400, 'The Stripe-Signature header does not verify with this mode\'s webhook secret.');
    }
    if (event.livemode !== livemode) return refuse(res, 400, 'The event\'s mode does not match.');
    const log = req.log.child({ stripeEventId: event.id, type: event.type });
    try {
      const handled = await handleStripeEvent(s, event, log);
      res.status(200).json({ received: true, handled });
    } catch (err) {
      // Stripe delivers it again later (with backoff, for up to three days).
      log.error({ err }, 'Stripe event not handled; Stripe will deliver it again');
      res.status(500).json({ error: { type: 'api_error', code: 'internal_error', message: 'The event could not be handled now; deliver it again.' } });
    }
  });
  return r;
}
