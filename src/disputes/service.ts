import type { Logger } from 'pino';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { ApiError, resourceMissing } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { ownerOf, type Owner } from '../lib/owner.ts';
import { assertChargesEnabled, processorFor, requireProcessor } from '../processor/select.ts';
import type { ProcessorDispute } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { enqueueDecisionCheck } from './jobs.ts';
import { presentDispute } from './presenter.ts';
import type { DisputeStatus, Evidence, UpdateDispute } from './schema.ts';
import * as store from './store.ts';
import type { DisputeRow } from './store.ts';
import { countDisputeClosed, countDisputeOpened } from '../reports/store.ts';

/**
 * How long a processor call (submit, close) may stay unanswered before the sweeper repeats it.
 * Longer than any call may take, so the sweeper never races a request still waiting on its answer.
 */
export const DISPUTE_ACTION_STALE_MS = 60_000;
/** The sync lists disputes created since the newest one recorded less this, so one committed late is not skipped. */
const SYNC_OVERLAP_MS = 10 * 60_000;
const PAGE = 100;
const BATCH = 100;

const STATUS: Record<ProcessorDispute['status'], DisputeStatus> = {
  needs_response: 'NEEDS_RESPONSE',
  under_review: 'UNDER_REVIEW',
  won: 'WON',
  lost: 'LOST',
};
const isFinal = (s: DisputeStatus) => s === 'WON' || s === 'LOST';

/**
 * One dispute the processor reported, recorded once (unique on its id): the dispute, the
 * payment's `disputed` flag and `dispute.created` in one transaction, under the payment's row
 * lock (a refund being created waits for it, and then sees the payment disputed).
 */
export async function recordProcessorDispute(s: Services, d: ProcessorDispute, livemode: boolean, log: Logger): Promise<DisputeRow | null> {
  return withTx(s, log, async (tx) => {
    const payment = await store.paymentForDispute(tx.sql, d.attempt, livemode);
    if (!payment || payment.status !== 'SUCCEEDED') {
      log.error({ processorDisputeId: d.id, paymentId: d.attempt, status: payment?.status }, 'the processor reports a dispute of no payment we recorded as SUCCEEDED');
      return null;
    }
    const o = ownerOf(payment);
    const row = await store.insertDispute(tx.sql, o, {
      id: newId('dp'),
      payment_id: payment.id,
      processor_dispute_id: d.id,
      processor_created_at: d.created,
      amount_cents: d.amount,
      currency: d.currency,
      reason: d.reason,
      status: STATUS[d.status],
      evidence_due_by: d.evidenceDueBy,
    });
    if (!row) return null; // already recorded (the job and the reconcile pass both asked)
    await store.markPaymentDisputed(tx.sql, o, payment.id);
    await countDisputeOpened(tx.sql, row); // the reports' rollups, in this transaction (src/reports)
    await countDisputeClosed(tx.sql, row);
    await recordEvent(tx, s, o.accountId, 'dispute.created', presentDispute(row));
    if (isFinal(row.status)) await recordEvent(tx, s, o.accountId, 'dispute.closed', presentDispute(row));
    log.info({ disputeId: row.id, paymentId: payment.id }, 'payment disputed');
    return row;
  });
}

/** Asks each mode's processor for disputes it opened since the last one recorded, and records the new ones. */
export async function syncNewDisputes(s: Services, log: Logger): Promise<number> {
  let created = 0;
  for (const livemode of [false, true]) {
    const processor = processorFor(s, livemode);
    if (!processor) continue; // live payments off: no live processor to ask
    const since = await store.syncSince(s.sql, livemode, SYNC_OVERLAP_MS);
    for (let after: string | null = null; ; ) {
      const page = await processor.listDisputes({ since, startingAfter: after, limit: PAGE });
      for (const d of page) if (await recordProcessorDispute(s, d, livemode, log)) created++;
      if (page.length < PAGE) break;
      after = page.at(-1)!.id;
    }
  }
  return created;
}

/**
 * A dispute event of the processor (Stripe's charge.dispute.*): a new dispute is recorded as the
 * sync would; a decision (WON or LOST) of one we have is recorded with `dispute.closed`, unless an
 * action of ours is pending (its answer records it). Idempotent like both.
 */
export async function recordDisputeEvent(s: Services, d: ProcessorDispute, livemode: boolean, log: Logger): Promise<void> {
  const row = await store.findByProcessorId(s.sql, d.id);
  if (!row) {
    await recordProcessorDispute(s, d, livemode, log);
    return;
  }
  const status = STATUS[d.status];
  if (!isFinal(status)) return;
  await withTx(s, log, async (tx) => {
    const current = await store.lockDispute(tx.sql, ownerOf(row), row.id);
    if (!current || isFinal(current.status) || current.pending_action) return;
    const closed = await store.updateDispute(tx.sql, row.id, { status, closed_at: new Date() });
    await countDisputeClosed(tx.sql, closed);
    await recordEvent(tx, s, row.account_id, 'dispute.closed', presentDispute(closed));
  });
}

/** The processor decided a dispute UNDER_REVIEW: WON or LOST, with `dispute.closed`. */
async function recordDecision(s: Services, o: Owner, id: string, status: DisputeStatus, log: Logger): Promise<DisputeRow | null> {
  if (!isFinal(status)) return null;
  return withTx(s, log, async (tx) => {
    const current = await store.lockDispute(tx.sql, o, id);
    if (!current || current.status !== 'UNDER_REVIEW' || current.pending_action) return null;
    const row = await store.updateDispute(tx.sql, id, { status, closed_at: new Date() });
    await countDisputeClosed(tx.sql, row);
    await recordEvent(tx, s, o.accountId, 'dispute.closed', presentDispute(row));
    return row;
  });
}

/** The decision job: asks the processor about one dispute UNDER_REVIEW; answers its status. */
export async function checkDecision(s: Services, o: Owner, id: string, log: Logger): Promise<DisputeStatus | 'missing'> {
  const row = await store.findDispute(s.sql, o, id);
  if (!row) return 'missing';
  if (row.status !== 'UNDER_REVIEW') return row.status;
  const d = await requireProcessor(s, row.livemode).retrieveDispute(row.processor_dispute_id);
  if (!d) return row.status;
  return (await recordDecision(s, o, id, STATUS[d.status], log))?.status ?? row.status;
}

/** Evidence updated: a value of null or "" clears the field. */
function mergeEvidence(current: Evidence, update: NonNullable<UpdateDispute['evidence']>): Evidence {
  const next: Record<string, string> = { ...current };
  for (const [k, v] of Object.entries(update)) {
    if (v === undefined) continue;
    if (v === null || v === '') delete next[k];
    else next[k] = v;
  }
  return next as Evidence;
}

function assertOpen(row: DisputeRow, param: string): void {
  if (row.pending_action) {
    const doing = row.pending_action === 'submit' ? 'its evidence is being submitted' : 'it is being closed';
    throw new ApiError('resource_invalid_state', `This dispute cannot be changed: ${doing}.`, param);
  }
  if (row.status !== 'NEEDS_RESPONSE') {
    throw new ApiError('resource_invalid_state', `This dispute is ${row.status}: it can only be changed while NEEDS_RESPONSE.`, param);
  }
}

/**
 * Transaction 1 of an action: the intent is committed (pending_action) before the processor is
 * called; `evidence`, when the same request changed it, goes in the same update. One update of the
 * row per transaction: a second update of a row version this transaction wrote makes Postgres check
 * the foreign key again (`for key share` on the payment), and the dispute sync, which holds the
 * payment's row lock while it inserts a dispute it may already have, then waits for this
 * transaction: a deadlock (seen in a full test run, test/dashboard/payments.test.ts).
 */
async function markPending(tx: Tx, row: DisputeRow, action: store.PendingAction, evidence?: Evidence): Promise<DisputeRow> {
  return store.updateDispute(tx.sql, row.id, { ...(evidence ? { evidence } : {}), pending_action: action, action_since: new Date() });
}

const callProcessor = (s: Services, row: DisputeRow): Promise<ProcessorDispute> =>
  row.pending_action === 'close'
    ? requireProcessor(s, row.livemode).closeDispute(row.processor_dispute_id)
    : requireProcessor(s, row.livemode).submitDisputeEvidence(row.processor_dispute_id, row.evidence as Record<string, string>);

/**
 * Transaction 2: the processor's answer to a pending action. Idempotent: when the request and the
 * sweeper both got an answer, the second finds nothing pending and changes nothing. Events:
 * UNDER_REVIEW → `dispute.updated`; WON or LOST → `dispute.closed`.
 */
async function recordAnswer(s: Services, o: Owner, id: string, d: ProcessorDispute, log: Logger): Promise<DisputeRow> {
  return withTx(s, log, async (tx) => {
    const current = await store.lockDispute(tx.sql, o, id);
    if (!current) throw new Error(`dispute ${id} vanished`);
    if (!current.pending_action) return current;
    const status = STATUS[d.status];
    const row = await store.updateDispute(tx.sql, id, {
      status,
      pending_action: null,
      action_since: null,
      ...(current.pending_action === 'submit' ? { submitted_at: new Date() } : {}),
      ...(isFinal(status) ? { closed_at: new Date() } : {}),
    });
    if (status === 'UNDER_REVIEW') {
      await recordEvent(tx, s, o.accountId, 'dispute.updated', presentDispute(row));
      tx.afterCommit(() => enqueueDecisionCheck(s, row));
    } else if (isFinal(status)) {
      if (!isFinal(current.status)) await countDisputeClosed(tx.sql, row);
      await recordEvent(tx, s, o.accountId, 'dispute.closed', presentDispute(row));
    }
    return row;
  });
}

/** Calls the processor for a committed action, with no transaction open, then records the answer. */
async function callAndRecord(s: Services, row: DisputeRow, log: Logger): Promise<DisputeRow> {
  let answer: ProcessorDispute;
  try {
    answer = await callProcessor(s, row);
  } catch (err) {
    log.error({ err, disputeId: row.id, action: row.pending_action }, 'processor call failed; the sweeper repeats it');
    throw new ApiError(
      'service_unavailable',
      `The card processor did not answer. The dispute is recorded as being ${row.pending_action === 'close' ? 'closed' : 'submitted'} and the service will finish it within a few minutes; do not retry.`,
    );
  }
  return recordAnswer(s, ownerOf(row), row.id, answer, log);
}

/** PATCH: evidence merged (dispute.updated), and with submit the evidence sent (→ UNDER_REVIEW). */
export async function updateDispute(s: Services, o: Owner, id: string, input: UpdateDispute, log: Logger, actor: AuditActor): Promise<DisputeRow> {
  const row = await withTx(s, log, async (tx) => {
    const current = await store.lockDispute(tx.sql, o, id);
    if (!current) throw resourceMissing('dispute', id);
    if (input.evidence === undefined && !input.submit) return current; // nothing asked for
    assertOpen(current, input.evidence !== undefined ? 'evidence' : 'submit');
    // Submitting calls the processor: without live keys, refused before anything is recorded (issue 21).
    if (input.submit) assertChargesEnabled(s, o.livemode, 'no evidence can be submitted');
    const merged = input.evidence === undefined ? undefined : mergeEvidence(current.evidence, input.evidence);
    const evidence = merged && JSON.stringify(merged) !== JSON.stringify(current.evidence) ? merged : undefined;
    if (evidence || input.submit) {
      // Which evidence fields changed, never their text (it may hold a customer's details).
      const fields = input.evidence ? Object.keys(input.evidence) : [];
      await recordAudit(tx.sql, { accountId: o.accountId, livemode: o.livemode, actor, action: input.submit ? 'dispute.evidence_submitted' : 'dispute.evidence_updated', object: { type: 'dispute', id }, data: { fields } });
    }
    if (input.submit) return markPending(tx, current, 'submit', evidence);
    if (!evidence) return current;
    const next = await store.updateDispute(tx.sql, id, { evidence });
    await recordEvent(tx, s, o.accountId, 'dispute.updated', presentDispute(next));
    return next;
  });
  return row.pending_action === 'submit' && input.submit ? callAndRecord(s, row, log) : row;
}

/** POST /close: the merchant accepts the loss (→ LOST, dispute.closed). */
export async function closeDispute(s: Services, o: Owner, id: string, log: Logger, actor: AuditActor): Promise<DisputeRow> {
  const row = await withTx(s, log, async (tx) => {
    const current = await store.lockDispute(tx.sql, o, id);
    if (!current) throw resourceMissing('dispute', id);
    assertOpen(current, 'id');
    assertChargesEnabled(s, o.livemode, 'no dispute can be closed');
    await recordAudit(tx.sql, { accountId: o.accountId, livemode: o.livemode, actor, action: 'dispute.accepted', object: { type: 'dispute', id } });
    return markPending(tx, current, 'close');
  });
  return callAndRecord(s, row, log);
}

/**
 * The repair pass (workers/reconcile.ts, `disputes`): new disputes the processor opened (a lost
 * sync job), decisions of disputes UNDER_REVIEW (a lost decision job, or a decision taking
 * longer), and actions left pending by a crash or a failed call, repeated (idempotent at the
 * processor) and recorded.
 */
export async function reconcileDisputes(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'disputes' });
  let repaired = await syncNewDisputes(s, log);
  for (const row of await store.takeUnderReview(s.sql, BATCH)) {
    try {
      const processor = processorFor(s, row.livemode);
      if (!processor) continue;
      const d = await processor.retrieveDispute(row.processor_dispute_id);
      if (d && (await recordDecision(s, ownerOf(row), row.id, STATUS[d.status], log))) repaired++;
    } catch (err) {
      log.error({ err, disputeId: row.id }, 'could not ask the processor about a dispute under review');
    }
  }
  for (const row of await store.stuckActions(s.sql, new Date(Date.now() - DISPUTE_ACTION_STALE_MS), BATCH)) {
    try {
      const answer = await callProcessor(s, row);
      await recordAnswer(s, ownerOf(row), row.id, answer, log);
      repaired++;
      log.warn({ disputeId: row.id, action: row.pending_action, processor: answer.status }, 'finished a dispute action left pending');
    } catch (err) {
      log.error({ err, disputeId: row.id }, 'could not finish a dispute action left pending');
    }
  }
  return repaired;
}
