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

/** Thrown where a live record needs the processor and live payments are off (no live keys). */
export class ProcessorUnavailable extends Error {
  constructor(livemode: boolean) {
    super(`no ${livemode ? 'live' : 'test'} processor is configured (live payments are off without STRIPE_SECRET_KEY)`);
    this.name = 'ProcessorUnavailable';
  }
}
