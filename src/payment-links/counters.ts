import type { Sql } from '../db/sql.ts';
import type { LinkSource } from './schema.ts';

/**
 * The counters of payment links (DESIGN 8). Each source row is counted exactly once: a view row is
 * inserted at most once (its id is minted by the web process), a payment is recorded in
 * payment_link_counted_payments at most once, and the counter moves in the same transaction as
 * that insert. Every writer locks the link rows first, in id order, so that batches, payment
 * jobs and the reconciler queue behind each other instead of deadlocking.
 */

/**
 * Page loads of one link from one source, as the web process hands them to the link-counters
 * queue: one record per link and source of a batch (issue 28), `views` loads in it (absent in the
 * jobs of a web process from before: one load each). The id is minted by the web process.
 */
export interface ViewRecord {
  id: string;
  link: string;
  source: LinkSource;
  /** Unix time in milliseconds of the first load it counts. */
  at: number;
  views?: number;
}

/** Stores the view records of a batch that are not stored yet and adds exactly their loads to view_count. */
export async function applyViews(sql: Sql, views: readonly ViewRecord[]): Promise<number> {
  if (views.length === 0) return 0;
  const linkIds = [...new Set(views.map((v) => v.link))].sort();
  return (await sql.begin(async (tx) => {
    await tx`select id from payment_links where id = any(${linkIds}::text[]) order by id for update`;
    const [row] = await tx<{ added: number }[]>`
      with v as (
        select * from unnest(${views.map((v) => v.id)}::text[], ${views.map((v) => v.link)}::text[],
                             ${views.map((v) => v.source)}::text[], ${views.map((v) => v.at)}::float8[],
                             ${views.map((v) => v.views ?? 1)}::int[])
          as v (id, link, source, at, views)
      ), ins as (
        insert into payment_link_views (id, payment_link_id, account_id, livemode, source, created_at, views)
        select v.id, l.id, l.account_id, l.livemode, v.source, to_timestamp(v.at / 1000.0), v.views
        from v join payment_links l on l.id = v.link collate "C"
        on conflict (id) do nothing
        returning payment_link_id, views
      ), c as (
        select payment_link_id, sum(views) as n from ins group by 1
      ), upd as (
        update payment_links l set view_count = l.view_count + c.n from c where l.id = c.payment_link_id returning c.n
      )
      select coalesce(sum(n), 0)::int as added from upd`;
    return row!.added;
  })) as number;
}

/**
 * Adds one successful link payment to its link's counters, once. False when already counted or not
 * a link payment. A later part of an installment plan adds its amount to total_collected_cents but
 * is not a payment of the link: the plan was counted once, with its first part.
 */
export async function applyPayment(sql: Sql, paymentId: string): Promise<boolean> {
  return (await sql.begin(async (tx) => {
    const [p] = await tx<{ link: string; amount: number; counts: number }[]>`
      select payment_link_id as link, amount_cents as amount, case when coalesce(installment_number, 1) = 1 then 1 else 0 end as counts
      from payments
      where id = ${paymentId} and status = 'SUCCEEDED' and payment_link_id is not null`;
    if (!p) return false;
    await tx`select id from payment_links where id = ${p.link} for update`;
    const counted = await tx`
      insert into payment_link_counted_payments (payment_id, payment_link_id) values (${paymentId}, ${p.link})
      on conflict (payment_id) do nothing returning payment_id`;
    if (counted.length === 0) return false;
    await tx`
      update payment_links
      set payment_count = payment_count + ${p.counts}, total_collected_cents = total_collected_cents + ${p.amount}
      where id = ${p.link}`;
    return true;
  })) as boolean;
}

/**
 * The repair pass: successful link payments whose job was lost are counted now, then every link
 * whose counters disagree with its source rows is recomputed under its row lock. Returns the
 * number of payments counted plus links recomputed.
 */
export async function reconcileCounters(sql: Sql, graceSeconds = 5): Promise<number> {
  // A payment younger than the grace period most likely has its job still on the way.
  const uncounted = await sql<{ id: string }[]>`
    select p.id from payments p
    where p.payment_link_id is not null and p.status = 'SUCCEEDED'
      and p.updated_at < now() - make_interval(secs => ${graceSeconds})
      and not exists (select 1 from payment_link_counted_payments c where c.payment_id = p.id)
    order by p.id limit 1000`;
  let repaired = 0;
  for (const p of uncounted) if (await applyPayment(sql, p.id)) repaired++;

  const drifted = await sql<{ id: string }[]>`
    select l.id from payment_links l
    left join lateral (select coalesce(sum(v.views), 0) as n from payment_link_views v where v.payment_link_id = l.id) v on true
    left join lateral (
      select count(*) filter (where coalesce(p.installment_number, 1) = 1) as n, coalesce(sum(p.amount_cents), 0) as total
      from payment_link_counted_payments c join payments p on p.id = c.payment_id
      where c.payment_link_id = l.id and p.status = 'SUCCEEDED'
    ) p on true
    where l.view_count <> v.n or l.payment_count <> p.n or l.total_collected_cents <> p.total
    order by l.id limit 1000`;
  for (const { id } of drifted) {
    await sql.begin(async (tx) => {
      await tx`select id from payment_links where id = ${id} for update`;
      // A new statement after the lock: its snapshot holds every row counted before the lock was taken.
      await tx`
        update payment_links l set
          view_count = (select coalesce(sum(v.views), 0) from payment_link_views v where v.payment_link_id = l.id),
          payment_count = (select count(*) from payment_link_counted_payments c join payments p on p.id = c.payment_id
                           where c.payment_link_id = l.id and p.status = 'SUCCEEDED' and coalesce(p.installment_number, 1) = 1),
          total_collected_cents = (select coalesce(sum(p.amount_cents), 0) from payment_link_counted_payments c
                                   join payments p on p.id = c.payment_id
                                   where c.payment_link_id = l.id and p.status = 'SUCCEEDED')
        where l.id = ${id}`;
    });
    repaired++;
  }
  return repaired;
}
