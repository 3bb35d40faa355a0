import type { Logger } from 'pino';
import { withTx, type Tx } from '../db/tx.ts';
import { recordEvent, recordEvents } from '../webhooks/outbox.ts';
import { presentPayment } from '../payments/presenter.ts';
import * as payments from '../payments/store.ts';
import type { Services } from '../services.ts';
import { presentSession } from './presenter.ts';
import * as store from './store.ts';
import type { Owner, SessionRow } from './store.ts';
import { ownerOf } from '../lib/owner.ts';
import { processorFor } from '../processor/select.ts';

/**
 * After an expiry commits: the session's intent is cancelled at the processor, so the payer's
 * browser can no longer confirm it (Stripe). Outside any transaction; marks the intent closed
 * when the cancel is confirmed. Any other answer (charged or processing meanwhile, Stripe down)
 * is left to the `checkout-intents` repair pass (intents.ts), which asks again and records a late
 * charge (refunded automatically). Never throws: the expiry itself has committed.
 */
export async function cancelExpiredIntent(s: Services, row: Pick<SessionRow, 'id' | 'livemode' | 'payment_intent_id'>, log: Logger): Promise<boolean> {
  const processor = processorFor(s, row.livemode);
  if (!row.payment_intent_id || !processor) return false;
  try {
    if (!(await processor.cancelPaymentIntent(row.payment_intent_id))) return false;
    await store.markIntentClosed(s.sql, row.id);
    return true;
  } catch (err) {
    log.warn({ err, sessionId: row.id }, 'could not cancel the expired session\'s intent; the checkout-intents pass tries again');
    return false;
  }
}

/**
 * OPEN to EXPIRED inside the caller's transaction, with its event. The update is conditional
 * (`status = 'OPEN'`), so a session expires at most once, and never after a payment won the row.
 * A session with a payment attempt in flight is left alone: the processor's answer decides it
 * (docs/payments.md). The row is locked before that check, so the check sees every attempt
 * committed before the lock. `dueAt`: expire only when expires_at has passed by then; null:
 * expire now (the API call).
 */
export async function expireInTx(tx: Tx, s: Services, o: Owner, id: string, dueAt: Date | null): Promise<SessionRow | undefined> {
  const locked = await store.lockSession(tx.sql, o, id);
  if (!locked || locked.status !== 'OPEN') return undefined;
  if (await payments.inFlightOfSession(tx.sql, o, id)) return undefined;
  const row = await store.markExpired(tx.sql, o, id, dueAt);
  if (!row) return undefined;
  const abandoned = await payments.failAbandoned(
    tx.sql, o, id, 'session_expired', 'The checkout session expired before this payment was finished.',
  );
  for (const p of abandoned) await recordEvent(tx, s, o.accountId, 'payment.failed', presentPayment(p, s.config.checkoutUrl));
  await recordEvent(tx, s, o.accountId, 'checkout.session.expired', presentSession(row, s.config.checkoutUrl));
  tx.afterCommit(() => s.metrics.checkoutSessions('expired', o.livemode));
  // Not awaited: a slow processor must not hold the hooks after it (the expiry job's unschedule).
  if (row.payment_intent_id) tx.afterCommit(() => void cancelExpiredIntent(s, row, s.log));
  return row;
}

export type ExpiryOutcome = 'expired' | 'not_due' | 'ended';

/** What the delayed job and the reconciler do for one session. */
export async function expireIfDue(s: Services, o: Owner, id: string, log: Logger): Promise<ExpiryOutcome> {
  return withTx(s, log, async (tx) => {
    if (await expireInTx(tx, s, o, id, new Date())) return 'expired';
    const row = await store.findSession(tx.sql, o, id);
    return row?.status === 'OPEN' ? 'not_due' : 'ended';
  });
}

/**
 * Expire-on-read: a session read after its expires_at is expired right there (with its event), so
 * the answer never says OPEN for a session that can no longer be paid, whether or not the job ran.
 */
export async function expireOnRead(s: Services, row: SessionRow, log: Logger): Promise<SessionRow> {
  if (row.status !== 'OPEN' || row.expires_at.getTime() > Date.now()) return row;
  const o = ownerOf(row);
  const expired = await withTx(s, log, (tx) => expireInTx(tx, s, o, row.id, new Date()));
  return expired ?? (await store.findSession(s.sql, o, row.id)) ?? row;
}

/**
 * Expires, in one transaction, up to `limit` OPEN sessions of any account that are past
 * expires_at by `dueBefore` (null: the database's clock now), each with its event (one insert for
 * all of them). Rows locked by another sweeper or a payment are skipped (SKIP LOCKED), so several
 * worker processes can sweep side by side.
 */
export async function expireDueBatch(s: Services, log: Logger, dueBefore: Date | null, limit: number): Promise<SessionRow[]> {
  return withTx(s, log, async (tx) => {
    const rows = await store.markDueExpired(tx.sql, dueBefore, limit);
    if (rows.length === 0) return rows;
    const ids = rows.map((r) => r.id);
    const abandoned = await payments.failAbandonedOfSessions(
      tx.sql, ids, 'session_expired', 'The checkout session expired before this payment was finished.',
    );
    await recordEvents(tx, s, [
      ...abandoned.map((p) => ({ accountId: p.account_id, type: 'payment.failed' as const, object: presentPayment(p, s.config.checkoutUrl) })),
      ...rows.map((r) => ({ accountId: r.account_id, type: 'checkout.session.expired' as const, object: presentSession(r, s.config.checkoutUrl) })),
    ]);
    const live = rows.filter((r) => r.livemode).length;
    tx.afterCommit(() => (s.metrics.checkoutSessions('expired', true, live), s.metrics.checkoutSessions('expired', false, rows.length - live)));
    const withIntent = rows.filter((r) => r.payment_intent_id);
    if (withIntent.length) tx.afterCommit(() => void Promise.all(withIntent.map((r) => cancelExpiredIntent(s, r, log))));
    return rows;
  });
}

/** How long past expires_at the reconciler leaves a session to the sweeper before stepping in. */
export const RECONCILE_GRACE_MS = 5_000;
const RECONCILE_BATCH = 500;

/** Expires OPEN sessions past their expires_at that the sweeper missed (no worker running, a sweep failing). */
export async function reconcileExpiries(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'checkout-session-expiry' });
  let expired = 0;
  for (let round = 0; round < 20; round++) {
    const batch = await expireDueBatch(s, log, new Date(Date.now() - RECONCILE_GRACE_MS), RECONCILE_BATCH);
    expired += batch.length;
    if (batch.length < RECONCILE_BATCH) break;
  }
  if (expired) log.warn({ expired }, 'expired sessions the expiry sweeper had missed');
  return expired;
}
