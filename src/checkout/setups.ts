import type { Logger } from 'pino';
import type { Sql, TxSql } from '../db/sql.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { newId } from '../lib/ids.ts';
import { ownerOf, type Owner } from '../lib/owner.ts';
import { cardBrand } from '../processor/cards.ts';
import { processorFor, requireProcessor } from '../processor/select.ts';
import type { CardDetails, SetupLookup } from '../processor/types.ts';
import type { Services } from '../services.ts';
import { expireInTx } from './expiry.ts';
import * as store from './store.ts';
import type { CardSetupRow, SessionRow } from './store.ts';

/**
 * Setup sessions (mode `setup`, issue 16): the hosted checkout collects a card and the processor
 * saves it, with no charge. One press of "Save card" is a card setup (`seti_…`), recorded the way a
 * payment attempt is (docs/decisions.md, "Payments outside transactions"): transaction 1 locks the
 * session and commits the setup in flight, the processor is called with nothing open, transaction
 * 2 records the answer; a 3-D Secure challenge waits between them as a payment's does; a crash in
 * between is settled by settleStuckSetups. Success completes the session (payment_status stays
 * `no_payment_required`) and runs each participant's afterSetup in the same transaction.
 */

export type SetupOutcome =
  | { kind: 'succeeded'; session: SessionRow; setup: CardSetupRow }
  | { kind: 'declined'; session: SessionRow; setup: CardSetupRow }
  | { kind: 'requires_action'; session: SessionRow; setup: CardSetupRow }
  | { kind: 'ended'; session: SessionRow }
  | { kind: 'no_challenge'; session: SessionRow }
  | { kind: 'in_progress'; session: SessionRow };

/** How long a setup may stay in flight before the sweeper asks the processor (as payments: longer than any call). */
export const SETTLE_SETUPS_AFTER_MS = 60_000;

const NOT_SAVED = 'Your card could not be saved. Please try again.';

// --- store ----------------------------------------------------------------------------------

async function insertSetup(sql: TxSql, o: Owner, sessionId: string, email: string, card: { name: string; brand: string; last4: string }): Promise<CardSetupRow> {
  const [row] = await sql<CardSetupRow[]>`
    insert into card_setups (id, account_id, livemode, checkout_session_id, email, billing_name, card_brand, card_last4, processing_since)
    values (${newId('seti')}, ${o.accountId}, ${o.livemode}, ${sessionId}, ${email}, ${card.name || null}, ${card.brand}, ${card.last4}, now())
    returning *`;
  return row!;
}

async function setupInFlight(sql: TxSql, sessionId: string): Promise<CardSetupRow | undefined> {
  const [row] = await sql<CardSetupRow[]>`
    select * from card_setups where checkout_session_id = ${sessionId} and status = 'PENDING' and processing_since is not null limit 1`;
  return row;
}

async function lockSetupInFlight(sql: TxSql, id: string): Promise<CardSetupRow | undefined> {
  const [row] = await sql<CardSetupRow[]>`
    select * from card_setups where id = ${id} and status = 'PENDING' and processing_since is not null for update`;
  return row;
}

/** Setups of the session left waiting for a challenge: failed when another starts or the session ends. */
async function failAbandonedSetups(sql: TxSql, sessionId: string): Promise<void> {
  await sql`
    update card_setups set status = 'FAILED', next_action = null, failure_code = 'authentication_abandoned',
      failure_message = 'A new attempt replaced this one before 3-D Secure was finished.', updated_at = now()
    where checkout_session_id = ${sessionId} and status = 'PENDING' and processing_since is null`;
}

export async function findSetup(sql: Sql | TxSql, sessionId: string, id: string): Promise<CardSetupRow | undefined> {
  const [row] = await sql<CardSetupRow[]>`select * from card_setups where id = ${id} and checkout_session_id = ${sessionId}`;
  return row;
}

/** The saved card of a COMPLETE setup session (its page shows it). */
export async function succeededSetupOf(sql: Sql, sessionId: string): Promise<CardSetupRow | undefined> {
  const [row] = await sql<CardSetupRow[]>`
    select * from card_setups where checkout_session_id = ${sessionId} and status = 'SUCCEEDED' order by id desc limit 1`;
  return row;
}

// --- the flow -------------------------------------------------------------------------------

async function lockOpen(tx: Tx, s: Services, row: SessionRow): Promise<{ session: SessionRow; state: 'open' | 'ended' | 'in_progress' }> {
  const o = ownerOf(row);
  const session = await store.lockSession(tx.sql, o, row.id);
  if (!session) throw new Error(`checkout session ${row.id} vanished`);
  if (session.status !== 'OPEN' || session.mode !== 'setup') return { session, state: 'ended' };
  if (await setupInFlight(tx.sql, session.id)) return { session, state: 'in_progress' };
  if (session.expires_at.getTime() <= Date.now()) {
    const expired = await expireInTx(tx, s, o, row.id, new Date());
    return { session: expired ?? session, state: 'ended' };
  }
  return { session, state: 'open' };
}

/** One press of "Save card": transaction 1, the processor with nothing open, transaction 2. */
export async function setupWithCard(s: Services, row: SessionRow, card: CardDetails, email: string, log: Logger): Promise<SetupOutcome> {
  const processor = requireProcessor(s, row.livemode);
  const started = await withTx(s, log, async (tx): Promise<SetupOutcome | { kind: 'started'; session: SessionRow; setup: CardSetupRow }> => {
    const { session, state } = await lockOpen(tx, s, row);
    if (state !== 'open') return { kind: state, session };
    await failAbandonedSetups(tx.sql, session.id);
    const setup = await insertSetup(tx.sql, ownerOf(session), session.id, email, { name: card.name, brand: cardBrand(card.number), last4: card.number.slice(-4) });
    return { kind: 'started', session, setup };
  });
  if (started.kind !== 'started') return started;
  return callAndRecordSetup(s, started.session, started.setup, log, () => processor.setupCard(started.setup.id, card, row.livemode));
}

/** The payer passed or failed the 3-D Secure challenge of setup `setupId`: the same three steps. */
export async function finishSetupChallenge(s: Services, row: SessionRow, setupId: string, outcome: 'complete' | 'fail', log: Logger): Promise<SetupOutcome> {
  const started = await withTx(s, log, async (tx): Promise<SetupOutcome | { kind: 'started'; session: SessionRow; setup: CardSetupRow }> => {
    const { session, state } = await lockOpen(tx, s, row);
    if (state !== 'open') return { kind: state, session };
    const [waiting] = await tx.sql<CardSetupRow[]>`
      update card_setups set processing_since = now(), updated_at = now()
      where id = ${setupId} and checkout_session_id = ${session.id} and status = 'PENDING'
        and next_action = 'three_d_secure' and processing_since is null
      returning *`;
    if (!waiting) return { kind: 'no_challenge', session };
    return { kind: 'started', session, setup: waiting };
  });
  if (started.kind !== 'started') return started;
  const processor = requireProcessor(s, row.livemode);
  return callAndRecordSetup(s, started.session, started.setup, log, () => processor.completeSetupAuthentication(setupId, outcome));
}

async function callAndRecordSetup(s: Services, session: SessionRow, setup: CardSetupRow, log: Logger, call: () => Promise<SetupLookup>): Promise<SetupOutcome> {
  let answer: SetupLookup;
  try {
    answer = await call();
  } catch (err) {
    log.error({ err, setupId: setup.id }, 'processor call failed; the card setup stays in flight until the sweeper settles it');
    return { kind: 'in_progress', session };
  }
  return recordSetupOutcome(s, setup, answer, log);
}

/**
 * Transaction 2 of a setup: under the session lock, only a setup still in flight changes (the
 * request and the sweeper may both answer; the second changes nothing). Saved: the setup
 * SUCCEEDED, the session COMPLETE, each participant's afterSetup, in one commit.
 */
export async function recordSetupOutcome(s: Services, setup: CardSetupRow, answer: SetupLookup, log: Logger): Promise<SetupOutcome> {
  const o = ownerOf(setup);
  return withTx(s, log, async (tx): Promise<SetupOutcome> => {
    const session = await store.lockSession(tx.sql, o, setup.checkout_session_id);
    if (!session) throw new Error(`checkout session ${setup.checkout_session_id} vanished`);
    const current = await lockSetupInFlight(tx.sql, setup.id);
    if (!current) {
      const now = await findSetup(tx.sql, session.id, setup.id);
      if (now?.status === 'SUCCEEDED') return { kind: 'succeeded', session, setup: now };
      if (now?.status === 'FAILED') return { kind: 'declined', session, setup: now };
      return { kind: 'in_progress', session };
    }
    if (answer.status === 'processing') return { kind: 'in_progress', session };
    if (answer.status === 'requires_action') {
      const [waiting] = await tx.sql<CardSetupRow[]>`
        update card_setups set next_action = 'three_d_secure', processing_since = null, updated_at = now() where id = ${setup.id} returning *`;
      return { kind: 'requires_action', session, setup: waiting! };
    }
    if (answer.status === 'succeeded' && session.status === 'OPEN') {
      const [saved] = await tx.sql<CardSetupRow[]>`
        update card_setups set status = 'SUCCEEDED', next_action = null, processing_since = null,
          processor_payment_method = ${answer.paymentMethod},
          card_brand = coalesce(${answer.card?.brand ?? null}, card_brand), card_last4 = coalesce(${answer.card?.last4 ?? null}, card_last4),
          updated_at = now()
        where id = ${setup.id} returning *`;
      const completed = await store.markComplete(tx.sql, o, session.id, null);
      await failAbandonedSetups(tx.sql, session.id);
      for (const participant of s.paymentParticipants) await participant.afterSetup?.(tx, completed, saved!);
      return { kind: 'succeeded', session: completed, setup: saved! };
    }
    // Declined, never seen by the processor, or saved after the session ended (nothing uses that card).
    const code = answer.status === 'declined' ? answer.code : answer.status === 'succeeded' ? 'checkout_session_expired' : 'processing_error';
    const message = answer.status === 'declined' ? answer.message : NOT_SAVED;
    const [failed] = await tx.sql<CardSetupRow[]>`
      update card_setups set status = 'FAILED', next_action = null, processing_since = null,
        failure_code = ${code}, failure_message = ${message}, updated_at = now()
      where id = ${setup.id} returning *`;
    if (session.status === 'OPEN' && session.expires_at.getTime() <= Date.now()) {
      const expired = await expireInTx(tx, s, o, session.id, new Date());
      if (expired) return { kind: 'ended', session: expired };
    }
    return { kind: 'declined', session, setup: failed! };
  });
}

/**
 * The `card-setups-in-flight` repair pass: setups left in flight over SETTLE_SETUPS_AFTER_MS by a
 * crash between the processor call and transaction 2 are settled with the processor's answer
 * (not_found closes a setup it never saw, so a late call cannot save a card for it).
 */
export async function settleStuckSetups(s: Services): Promise<number> {
  const log = s.log.child({ reconciler: 'card-setups-in-flight' });
  const stuck = await s.sql<CardSetupRow[]>`
    select * from card_setups where processing_since is not null and processing_since < ${new Date(Date.now() - SETTLE_SETUPS_AFTER_MS)}
    order by processing_since limit 200`;
  let settled = 0;
  for (const setup of stuck) {
    try {
      const processor = processorFor(s, setup.livemode);
      if (!processor) continue;
      const answer = await processor.retrieveSetup(setup.id);
      if (answer.status === 'processing') continue;
      await recordSetupOutcome(s, setup, answer, log);
      settled++;
    } catch (err) {
      log.error({ err, setupId: setup.id }, 'could not settle a card setup left in flight');
    }
  }
  return settled;
}
