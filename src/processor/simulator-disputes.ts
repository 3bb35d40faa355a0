import type { Sql } from '../db/sql.ts';
import type { Processor, ProcessorDispute } from './types.ts';

/**
 * How long after a charge of card 4000 0000 0000 0259 succeeded the simulator reports it disputed
 * (a real chargeback comes days or weeks later), and how long after evidence is submitted a
 * dispute is decided. The service's disputes job asks a little later than each (src/disputes/jobs.ts).
 */
export const SIMULATOR_DISPUTE_AFTER_MS = 1000;
export const SIMULATOR_DISPUTE_DECIDE_MS = 1000;
/** The respond-by date of a simulated dispute. */
const EVIDENCE_DAYS = 7;
/** Stripe's test convention: the evidence's uncategorized_text decides the outcome. */
const OUTCOMES: Record<string, 'won' | 'lost'> = { winning_evidence: 'won', losing_evidence: 'lost' };

interface DisputeRecord {
  id: string;
  attempt_id: string;
  amount_cents: number;
  currency: string;
  reason: string;
  status: ProcessorDispute['status'];
  evidence_due_by: Date;
  created_at: Date;
}

const asDispute = (r: DisputeRecord): ProcessorDispute => ({
  id: r.id,
  attempt: r.attempt_id,
  amount: Number(r.amount_cents),
  currency: r.currency,
  reason: r.reason,
  status: r.status,
  evidenceDueBy: r.evidence_due_by,
  created: r.created_at,
});

type DisputeFunctions = Pick<Processor, 'listDisputes' | 'retrieveDispute' | 'submitDisputeEvidence' | 'closeDispute'> &
  Required<Pick<Processor, 'openDispute'>>;

/**
 * The simulator's disputes, kept in simulator_disputes and written by its own statements, never
 * inside one of our transactions. A dispute exists once anyone asks for disputes after the
 * disputed card's charge is a moment old; a submitted one is decided when asked about after
 * decide_at. Every call is idempotent (the dispute id is derived from the attempt).
 */
export function simulatorDisputes(sql: Sql): DisputeFunctions {
  async function read(id: string): Promise<ProcessorDispute | null> {
    const [row] = await sql<DisputeRecord[]>`select * from simulator_disputes where id = ${id}`;
    return row ? asDispute(row) : null;
  }
  async function decideDue(id: string): Promise<void> {
    await sql`
      update simulator_disputes set status = outcome, updated_at = now()
      where id = ${id} and status = 'under_review' and outcome is not null and decide_at <= now()`;
  }
  const must = (d: ProcessorDispute | null, id: string): ProcessorDispute => {
    if (!d) throw new Error(`simulator: no dispute ${id}`);
    return d;
  };

  return {
    async listDisputes({ since, startingAfter, limit }) {
      await sql`
        insert into simulator_disputes (id, attempt_id, intent_id, amount_cents, currency, livemode, reason, status, evidence_due_by)
        select 'du_sim_' || substr(md5(a.attempt_id), 1, 24), a.attempt_id, a.intent_id, i.amount_cents, i.currency, i.livemode,
          'fraudulent', 'needs_response', now() + make_interval(days => ${EVIDENCE_DAYS})
        from simulator_attempts a join simulator_intents i on i.id = a.intent_id
        where a.behaviour = 'disputed' and a.status = 'succeeded'
          and a.updated_at <= now() - make_interval(secs => ${SIMULATOR_DISPUTE_AFTER_MS / 1000})
          and not exists (select 1 from simulator_disputes d where d.attempt_id = a.attempt_id)
        on conflict do nothing`;
      const rows = await sql<DisputeRecord[]>`
        select * from simulator_disputes
        where created_at >= ${since ?? new Date(0)}
          ${startingAfter ? sql`and (created_at, id) > (select created_at, id from simulator_disputes where id = ${startingAfter})` : sql``}
        order by created_at, id
        limit ${limit}`;
      return rows.map(asDispute);
    },
    async retrieveDispute(id) {
      await decideDue(id);
      return read(id);
    },
    async submitDisputeEvidence(id, evidence) {
      const outcome = OUTCOMES[evidence.uncategorized_text ?? ''] ?? null;
      await sql`
        update simulator_disputes set status = 'under_review', evidence = ${sql.json(evidence)}, outcome = ${outcome},
          decide_at = now() + make_interval(secs => ${SIMULATOR_DISPUTE_DECIDE_MS / 1000}), updated_at = now()
        where id = ${id} and status = 'needs_response'`;
      await decideDue(id);
      return must(await read(id), id);
    },
    async openDispute({ attempt, amount, reason }) {
      // The row listDisputes makes for card 0259, with the same id derived from the attempt: whichever comes first stands.
      const [made] = await sql<DisputeRecord[]>`
        insert into simulator_disputes (id, attempt_id, intent_id, amount_cents, currency, livemode, reason, status, evidence_due_by)
        select 'du_sim_' || substr(md5(a.attempt_id), 1, 24), a.attempt_id, a.intent_id, ${amount}, i.currency, i.livemode,
          ${reason}, 'needs_response', now() + make_interval(days => ${EVIDENCE_DAYS})
        from simulator_attempts a join simulator_intents i on i.id = a.intent_id
        where a.attempt_id = ${attempt} and a.status = 'succeeded'
        on conflict do nothing
        returning *`;
      // Not made by this call: the one that stands, if the attempt was charged at all.
      const [row] = made ? [made] : await sql<DisputeRecord[]>`select * from simulator_disputes where attempt_id = ${attempt}`;
      return row ? { dispute: asDispute(row), opened: made !== undefined } : null;
    },
    async closeDispute(id) {
      await sql`update simulator_disputes set status = 'lost', updated_at = now() where id = ${id} and status = 'needs_response'`;
      return must(await read(id), id);
    },
  };
}
