import type { Sql, TxSql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from './store.ts';
import type { AttemptResult } from './sender.ts';

type Db = Sql | TxSql;

/** BullMQ makes at most this many automatic attempts; the delivery row counts them too (DESIGN 5). */
export const MAX_ATTEMPTS = 7;

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'PAUSED' | 'CANCELLED';

export interface DeliveryRow {
  id: string;
  account_id: string;
  livemode: boolean;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

/** Endpoints of the account and mode subscribed to `type` (or to everything), active or not. */
export async function subscribedEndpoints(db: Db, accountId: string, livemode: boolean, type: string) {
  return db<{ id: string; is_active: boolean }[]>`
    select id, is_active from webhook_endpoints
    where account_id = ${accountId} and livemode = ${livemode}
      and (${type} = any(enabled_events) or '*' = any(enabled_events))
    order by id`;
}

/**
 * One delivery per endpoint: PENDING and due now for an active endpoint, PAUSED for an inactive one
 * (it waits for the endpoint to be re-enabled). Returns the new rows.
 */
export async function insertDeliveries(
  db: Db,
  accountId: string,
  livemode: boolean,
  eventId: string,
  endpoints: ReadonlyArray<{ id: string; is_active: boolean }>,
): Promise<Array<{ id: string; status: DeliveryStatus }>> {
  if (endpoints.length === 0) return [];
  const ids = endpoints.map(() => newId('wd'));
  const statuses = endpoints.map((e) => (e.is_active ? 'PENDING' : 'PAUSED'));
  return db<Array<{ id: string; status: DeliveryStatus }>>`
    insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at)
    select d.id, ${accountId}, ${livemode}, ${eventId}, d.endpoint_id, d.status,
           case when d.status = 'PENDING' then now() end
    from unnest(${ids}::text[], ${endpoints.map((e) => e.id)}::text[], ${statuses}::text[]) as d (id, endpoint_id, status)
    returning id, status`;
}

/** What one attempt needs: the delivery, its endpoint (null when deleted) and its event. */
export interface AttemptContext {
  id: string;
  status: DeliveryStatus;
  attempt_count: number;
  endpoint_id: string;
  url: string | null;
  is_active: boolean | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  event_id: string;
  livemode: boolean;
  type: string;
  api_version: string;
  data: unknown;
  event_created_at: Date;
}

export async function loadAttemptContext(sql: Sql, id: string): Promise<AttemptContext | undefined> {
  const [row] = await sql<AttemptContext[]>`
    select d.id, d.status, d.attempt_count, d.endpoint_id,
           e.url, e.is_active, e.secret, e.previous_secret, e.previous_secret_expires_at,
           ev.id as event_id, ev.livemode, ev.type, ev.api_version, ev.data, ev.created_at as event_created_at
    from webhook_deliveries d
    join events ev on ev.id = d.event_id
    left join webhook_endpoints e on e.id = d.endpoint_id
    where d.id = ${id}`;
  return row;
}

/**
 * PENDING to PAUSED, only while the endpoint is inactive. The share lock on the endpoint orders
 * this against a concurrent re-enable, which then finds the PAUSED row and resumes it. False when
 * the endpoint is active after all.
 */
export async function pauseIfInactive(sql: Sql, id: string, endpointId: string): Promise<boolean> {
  const rows = await sql`
    with e as (select is_active from webhook_endpoints where id = ${endpointId} for share)
    update webhook_deliveries set status = 'PAUSED', next_attempt_at = null, updated_at = now()
    where id = ${id} and status = 'PENDING' and exists (select 1 from e where not is_active)
    returning id`;
  return rows.length > 0;
}

export async function cancelDelivery(sql: Sql, id: string): Promise<void> {
  await sql`
    update webhook_deliveries set status = 'CANCELLED', next_attempt_at = null, updated_at = now()
    where id = ${id} and status in ('PENDING', 'PAUSED')`;
}

/**
 * Stores attempt `n` and moves the delivery on, in one statement. A success is SUCCEEDED whatever
 * happened meanwhile (the receiver has the event); a failure keeps a PAUSED or CANCELLED row as it
 * is, makes a PENDING row FAILED at attempt 7, or schedules it `retryDelayMs` ahead.
 * Returns the new status, or null when this attempt number was already recorded by another run.
 */
export async function recordAttempt(sql: Sql, id: string, n: number, r: AttemptResult, retryDelayMs: number): Promise<DeliveryStatus | null> {
  const [row] = await sql<{ status: DeliveryStatus }[]>`
    with a as (
      insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
      values (${id}, ${n}, ${r.startedAt}, ${r.durationMs}, ${r.statusCode}, ${r.error}, ${r.responseBody})
      on conflict do nothing
      returning attempt
    )
    update webhook_deliveries d set
      attempt_count = ${n},
      last_attempt_at = ${r.startedAt},
      status = case when ${r.ok} then 'SUCCEEDED'
                    when d.status = 'PENDING' and ${n} >= ${MAX_ATTEMPTS} then 'FAILED'
                    else d.status end,
      next_attempt_at = case when not ${r.ok} and d.status = 'PENDING' and ${n} < ${MAX_ATTEMPTS}
                             then now() + make_interval(secs => ${retryDelayMs / 1000}) end,
      updated_at = now()
    where d.id = ${id} and d.attempt_count = ${n - 1} and exists (select 1 from a)
    returning d.status`;
  return row?.status ?? null;
}

/** Moves an endpoint's open deliveries (PENDING, PAUSED) to `to`; returns their ids. */
export async function moveOpenDeliveries(db: Db, endpointId: string, from: DeliveryStatus[], to: DeliveryStatus): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    update webhook_deliveries set status = ${to},
      next_attempt_at = ${to === 'PENDING' ? db`now()` : db`null`}, updated_at = now()
    where endpoint_id = ${endpointId} and status = any(${from}::text[])
    returning id`;
  return rows.map((r) => r.id);
}

export async function listForEvent(db: Db, o: Owner, eventId: string, p: PageParams): Promise<DeliveryRow[]> {
  const k = keyset(db as Sql, p);
  return db<DeliveryRow[]>`
    select * from webhook_deliveries
    where event_id = ${eventId} and account_id = ${o.accountId} and livemode = ${o.livemode} ${k.where}
    ${k.order} limit ${k.limit}`;
}

export async function findDeliveries(db: Db, ids: readonly string[]): Promise<DeliveryRow[]> {
  if (ids.length === 0) return [];
  return db<DeliveryRow[]>`select * from webhook_deliveries where id = any(${ids as string[]}::text[]) order by id`;
}

export async function attemptsOf(db: Db, deliveryIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db<AttemptRow[]>`
    select * from webhook_attempts where delivery_id = any(${deliveryIds as string[]}::text[]) order by delivery_id, attempt`;
  for (const r of rows) {
    const list = byDelivery.get(r.delivery_id) ?? [];
    list.push(r);
    byDelivery.set(r.delivery_id, list);
  }
  return byDelivery;
}

/** PENDING deliveries due now, in id order after `afterId`: what the reconciler checks for a live job. */
export async function duePending(sql: Sql, afterId: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from webhook_deliveries
    where status = 'PENDING' and next_attempt_at <= now() and id > ${afterId}
    order by id limit ${limit}`;
  return rows.map((r) => r.id);
}

export async function stillPending(sql: Sql, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from webhook_deliveries where id = any(${ids as string[]}::text[]) and status = 'PENDING'`;
  return rows.map((r) => r.id);
}
