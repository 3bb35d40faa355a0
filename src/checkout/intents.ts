import { processorFor } from '../processor/select.ts';
import type { Services } from '../services.ts';
import { cancelExpiredIntent } from './expiry.ts';
import { recordIntentOutcome } from './settle.ts';
import * as store from './store.ts';

const BATCH = 200;

/**
 * The `checkout-intents` repair pass: expired sessions whose intent is not known cancelled (the
 * cancel after expiry failed, or lost the race to a confirmation). Cancelled now: closed. Found
 * charged: the charge is recorded and refunded automatically (recordIntentOutcome), then closed.
 * Still processing at the processor: asked again on the next pass. Modes without a processor are
 * skipped; the simulator's intents are closed by the first cancel after expiry.
 */
export async function reconcileExpiredIntents(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'checkout-intents' });
  const modes = [false, true].filter((m) => processorFor(s, m) !== null);
  if (modes.length === 0) return 0;
  let repaired = 0;
  for (const row of await store.expiredWithOpenIntent(s.sql, modes, BATCH)) {
    try {
      if (await cancelExpiredIntent(s, row, log)) {
        repaired++;
        continue;
      }
      const result = await processorFor(s, row.livemode)!.retrieveAttempt(row.payment_intent_id!, row.id);
      if (result.status === 'processing') continue;
      if (result.status === 'succeeded') await recordIntentOutcome(s, row.payment_intent_id!, row.livemode, result, log);
      await store.markIntentClosed(s.sql, row.id);
      repaired++;
    } catch (err) {
      log.error({ err, sessionId: row.id }, 'could not close an expired session\'s intent');
    }
  }
  return repaired;
}
