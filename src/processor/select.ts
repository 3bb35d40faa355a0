import { ApiError } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import type { Processor } from './types.ts';

/**
 * The processor of a mode: test mode always has one (the simulator, or Stripe's test mode when
 * STRIPE_TEST_* are set); live mode only with live Stripe keys. null: live payments are off, and
 * nothing may pretend to take one (docs/decisions.md, "Stripe processor").
 */
export function processorFor(s: Pick<Services, 'processors'>, livemode: boolean): Processor | null {
  return livemode ? s.processors.live : s.processors.test;
}

/** `charges_enabled` of GET /v1/account: whether the mode can take payments at all. */
export function chargesEnabled(s: Pick<Services, 'processors'>, livemode: boolean): boolean {
  return processorFor(s, livemode) !== null;
}

/** The processor of a mode that must have one (a record that exists was paid through it). */
export function requireProcessor(s: Pick<Services, 'processors'>, livemode: boolean): Processor {
  const p = processorFor(s, livemode);
  if (!p) throw new ProcessorUnavailable(livemode);
  return p;
}

/**
 * An API call that needs the processor of its mode, refused before anything is recorded when live
 * payments are off (no live keys): `400 processor_unavailable`, the merchant's setup, never the 5xx
 * of a call that failed. `what` ends the sentence: "nothing can be refunded".
 */
export function assertChargesEnabled(s: Pick<Services, 'processors'>, livemode: boolean, what: string): void {
  if (chargesEnabled(s, livemode)) return;
  throw new ApiError(
    'processor_unavailable',
    `Live payments are off: no live card processor is configured (STRIPE_SECRET_KEY), so ${what} in live mode. GET /v1/account shows charges_enabled.`,
  );
}

/** Thrown where a live record needs the processor and live payments are off (no live keys). */
export class ProcessorUnavailable extends Error {
  constructor(livemode: boolean) {
    super(`no ${livemode ? 'live' : 'test'} processor is configured (live payments are off without STRIPE_SECRET_KEY)`);
    this.name = 'ProcessorUnavailable';
  }
}
