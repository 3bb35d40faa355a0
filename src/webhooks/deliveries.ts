import type { Db, Sql } from '../db/sql.ts';
import type { EventRow } from '../events/store.ts';
import { withinIds } from '../db/partitions.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from './store.ts';
import type { AttemptResult } from './sender.ts';

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
  /** The object of a delivery made for an ordered endpoint (ordering.ts); else null. */
  object_id: string | null;
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
  /** Null when nothing answered, or when it is not to be shown (a private target outside a developer's machine: attemptsOf). */
  response_body: string | null;
  /** The address connected to was not public (null: nothing answered, or an attempt made before issue 21). */
  target_private: boolean | null;
}

/** An endpoint takes an event when its enabled_events name the type or hold `*`. */
export const subscribes = (ep: { enabled_events: readonly string[] }, type: string): boolean =>
  ep.enabled_events.includes(type) || ep.enabled_events.includes('*');

/** Every endpoint of the accounts and modes of `events`, with its subscriptions, in one read. */
export async function subscriptionsOf(db: Db, events: ReadonlyArray<{ accountId: string; livemode: boolean }>) {
  const owners = [...new Map(events.map((e) => [`${e.livemode}:${e.accountId}`, e])).values()];
  return db<{ id: string; account_id: string; livemode: boolean; enabled_events: string[]; is_active: boolean; ordered: boolean; rate_limit: number | null }[]>`
    select w.id, w.account_id, w.livemode, w.enabled_events, w.is_active, w.ordered, w.rate_limit
    from webhook_endpoints w
    join unnest(${owners.map((o) => o.accountId)}::text[], ${owners.map((o) => String(o.livemode))}::text[]::boolean[]) as o (account_id, livemode)
      on w.account_id = o.account_id and w.livemode = o.livemode
    order by w.id`;
}

export interface NewDelivery {
  accountId: string;
  livemode: boolean;
  eventId: string;
  endpointId: string;
  /** false: the endpoint is disabled, and the delivery waits PAUSED for it. */
  active: boolean;
  /** The event's data.object.id when the endpoint is ordered (ordering.ts); else null or absent. */
  objectId?: string | null;
  /** The endpoint's rate_limit, if any: its job then waits for a throttle slot (jobs.ts). */
  rateLimit?: number | null;
}

/**
 * The delivery rows, one statement for all: PENDING and due now for an active endpoint, PAUSED
 * for an inactive one (it waits for the endpoint to be re-enabled). Returns the new rows.
 */
export async function insertDeliveryRows(db: Db, ds: readonly NewDelivery[]): Promise<Array<{ id: string; status: DeliveryStatus; endpoint_id: string }>> {
  if (ds.length === 0) return [];
  return db<Array<{ id: string; status: DeliveryStatus; endpoint_id: string }>>`
    insert into webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, object_id)
    select d.id, d.account_id, d.livemode, d.event_id, d.endpoint_id, d.status,
           case when d.status = 'PENDING' then now() end, d.object_id
    from unnest(${ds.map(() => newId('wd'))}::text[], ${ds.map((d) => d.accountId)}::text[], ${ds.map((d) => String(d.livemode))}::text[]::boolean[],
                ${ds.map((d) => d.eventId)}::text[], ${ds.map((d) => d.endpointId)}::text[],
                ${ds.map((d) => (d.active ? 'PENDING' : 'PAUSED'))}::text[],
                ${ds.map((d) => d.objectId ?? null) as string[]}::text[]) as d (id, account_id, livemode, event_id, endpoint_id, status, object_id)
    returning id, status, endpoint_id`;
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
  /** The endpoint's custom headers (null when it is deleted). */
  headers: Record<string, string> | null;
  /** The endpoint's throttle, deliveries per second (null: none, or the endpoint is deleted; throttle.ts). */
  rate_limit: number | null;
  /** What the delivery is about when its endpoint was ordered as it was made (ordering.ts); else null. */
  object_id: string | null;
  event_id: string;
  livemode: boolean;
  type: EventRow['type'];
  api_version: string;
  /** The event's data as stored: the text of the json column (presentEventJson splices it into the body). */
  data_json: string;
  event_created_at: Date;
}

/** A delivery whose event was dropped with its partition (RETENTION_EVENTS_DAYS) while it waited: it cannot be sent. */
export const EVENT_EXPIRED = 'event-expired';

/**
 * The attempt contexts of `ids`, in the same order: undefined for a delivery that does not exist,
 * EVENT_EXPIRED for one whose event is past its retention. Two statements, each searching only the
 * partitions of the ids it is given: joined in one, the events side could not be pruned when
 * planned, and Postgres would plan every partition of events on each call.
 */
export async function loadAttemptContexts(sql: Sql, ids: readonly string[]): Promise<Array<AttemptContext | typeof EVENT_EXPIRED | undefined>> {
  if (ids.length === 0) return [];
  const deliveries = await sql<Array<Pick<AttemptContext, 'id' | 'status' | 'attempt_count' | 'endpoint_id' | 'url' | 'is_active' | 'secret' | 'previous_secret' | 'previous_secret_expires_at' | 'headers' | 'rate_limit' | 'object_id' | 'event_id'>>>`
    select d.id, d.status, d.attempt_count, d.endpoint_id, d.event_id, d.object_id,
           e.url, e.is_active, e.secret, e.previous_secret, e.previous_secret_expires_at, e.headers, e.rate_limit
    from webhook_deliveries d
    left join webhook_endpoints e on e.id = d.endpoint_id
    where d.id = any(${ids as string[]}::text[]) and ${withinIds(sql, 'd.id', ids)}`;
  const eventIds = [...new Set(deliveries.map((d) => d.event_id))];
  const events = eventIds.length
    ? await sql<Array<Pick<AttemptContext, 'event_id' | 'livemode' | 'type' | 'api_version' | 'data_json' | 'event_created_at'>>>`
        select id as event_id, livemode, type, api_version, data::text as data_json, created_at as event_created_at
        from events where id = any(${eventIds}::text[]) and ${withinIds(sql, 'id', eventIds)}`
    : [];
  const eventById = new Map(events.map((e) => [e.event_id, e]));
  const byId = new Map(deliveries.map((d) => [d.id, d]));
  return ids.map((id) => {
    const d = byId.get(id);
    if (!d) return undefined;
    const event = eventById.get(d.event_id);
    return event ? { ...d, ...event } : EVENT_EXPIRED;
  });
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

/** CANCELLED, from PENDING or PAUSED; true when this call cancelled it. */
export async function cancelDelivery(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`
    update webhook_deliveries set status = 'CANCELLED', next_attempt_at = null, updated_at = now()
    where id = ${id} and status in ('PENDING', 'PAUSED')
    returning id`;
  return rows.length > 0;
}

export interface AttemptRecord {
  id: string;
  /** The delivery's endpoint, whose health the outcome updates (health.ts). */
  endpointId: string;
  /** The attempt number: the delivery's attempt_count + 1 when it was loaded. */
  n: number;
  result: AttemptResult;
  /** When this attempt fails and the delivery stays PENDING, the next one is due this much later. */
  retryDelayMs: number;
}

/**
 * Stores attempts and moves their deliveries on, in one statement for the whole batch. A success is
 * SUCCEEDED whatever happened meanwhile (the receiver has the event); a failure keeps a PAUSED or
 * CANCELLED row as it is, makes a PENDING row FAILED at attempt 7, or schedules its next attempt.
 * Returns each new status in input order, or null where that attempt number was already recorded
 * by another run of the same delivery. The id range beside the join lets Postgres leave out the
 * partitions of webhook_deliveries the batch has no row in (the join alone updates through all of them).
 */
export async function recordAttempts(sql: Db, records: readonly AttemptRecord[]): Promise<Array<DeliveryStatus | null>> {
  if (records.length === 0) return [];
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  const rows = await sql<{ id: string; status: DeliveryStatus }[]>`
    with input as (
      select * from unnest(
        ${col((r) => r.id)}::text[], ${col((r) => r.n)}::int[], ${col((r) => r.result.startedAt.toISOString())}::timestamptz[],
        ${col((r) => r.result.durationMs)}::int[], ${col((r) => r.result.statusCode) as number[]}::int[],
        ${col((r) => r.result.error) as string[]}::text[], ${col((r) => r.result.responseBody) as string[]}::text[],
        ${col((r) => (r.result.ok ? 't' : 'f'))}::text[]::boolean[], ${col((r) => r.retryDelayMs / 1000)}::float8[],
        ${col((r) => (r.result.targetPrivate === null ? null : String(r.result.targetPrivate))) as string[]}::text[]::boolean[]
      ) as x (id, n, started_at, duration_ms, status_code, error, response_body, ok, retry_s, target_private)
    ), inserted as (
      insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body, target_private)
      select id, n, started_at, duration_ms, status_code, error, response_body, target_private from input
      on conflict do nothing
      returning delivery_id, attempt
    )
    update webhook_deliveries d set
      attempt_count = i.n,
      last_attempt_at = i.started_at,
      status = case when i.ok then 'SUCCEEDED'
                    when d.status = 'PENDING' and i.n >= ${MAX_ATTEMPTS} then 'FAILED'
                    else d.status end,
      next_attempt_at = case when not i.ok and d.status = 'PENDING' and i.n < ${MAX_ATTEMPTS}
                             then now() + make_interval(secs => i.retry_s) end,
      updated_at = now()
    from input i join inserted a on a.delivery_id = i.id and a.attempt = i.n
    where d.id = i.id and d.attempt_count = i.n - 1 and ${withinIds(sql, 'd.id', records.map((r) => r.id))}
    returning d.id, d.status`;
  const byId = new Map(rows.map((r) => [r.id, r.status]));
  return records.map((r) => byId.get(r.id) ?? null);
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
  return db<DeliveryRow[]>`select * from webhook_deliveries where id = any(${ids as string[]}::text[]) and ${withinIds(db, 'id', ids)} order by id`;
}

/**
 * The attempts of these deliveries. `privateExcerpts` false (a service not clearly on a developer's
 * machine: config `localSetup`): the response excerpt of an attempt whose target was not public, or
 * is not known to have been, is left out (issue 21), so a test key cannot read a private service's answers.
 */
export async function attemptsOf(db: Db, deliveryIds: readonly string[], privateExcerpts: boolean): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db<AttemptRow[]>`
    select delivery_id, attempt, started_at, duration_ms, status_code, error, target_private,
      case when ${privateExcerpts}::boolean or target_private is false then response_body end as response_body
    from webhook_attempts where delivery_id = any(${deliveryIds as string[]}::text[]) and ${withinIds(db, 'delivery_id', deliveryIds)}
    order by delivery_id, attempt`;
  for (const r of rows) {
    const list = byDelivery.get(r.delivery_id) ?? [];
    list.push(r);
    byDelivery.set(r.delivery_id, list);
  }
  return byDelivery;
}

/** PENDING deliveries due now, in id order after `afterId`, with their endpoint's rate_limit: what the reconciler checks for a live job. */
export async function duePending(sql: Sql, afterId: string, limit: number): Promise<Array<{ id: string; endpoint_id: string; rate_limit: number | null }>> {
  return sql<Array<{ id: string; endpoint_id: string; rate_limit: number | null }>>`
    select d.id, d.endpoint_id, e.rate_limit from webhook_deliveries d left join webhook_endpoints e on e.id = d.endpoint_id
    where d.status = 'PENDING' and d.next_attempt_at <= now() and d.id > ${afterId}
    order by d.id limit ${limit}`;
}

export async function stillPending(sql: Sql, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from webhook_deliveries where id = any(${ids as string[]}::text[]) and ${withinIds(sql, 'id', ids)} and status = 'PENDING'`;
  return rows.map((r) => r.id);
}

/** A delivery with the type of its event (and whether it is a test event's sample), for lists that show what was sent. */
export type EndpointDeliveryRow = DeliveryRow & { event_type: EventRow['type']; event_sample: boolean };

/** The deliveries of one endpoint, newest first, optionally of one status (keyset-paged). */
export async function listForEndpoint(db: Db, o: Owner, endpointId: string, p: PageParams, status?: DeliveryStatus): Promise<EndpointDeliveryRow[]> {
  const k = keyset(db as Sql, p, 'd.id');
  return db<EndpointDeliveryRow[]>`
    select d.*, ev.type as event_type, ev.sample as event_sample
    from webhook_deliveries d join events ev on ev.id = d.event_id
    where d.endpoint_id = ${endpointId} and d.account_id = ${o.accountId} and d.livemode = ${o.livemode}
      ${status !== undefined ? db`and d.status = ${status}` : db``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/**
 * The events whose latest delivery to this endpoint is FAILED and was created at or after `since`,
 * oldest first, at most `limit`. A (event, endpoint) with a later delivery (a retry, a resend) is not
 * one of them: a second retry-all does not send again what the first already sent.
 */
export async function failedSince(db: Db, o: Owner, endpointId: string, since: number, limit: number): Promise<Array<{ event_id: string; object_id: string | null }>> {
  return db<Array<{ event_id: string; object_id: string | null }>>`
    select d.event_id, (select ev.data->'object'->>'id' from events ev where ev.id = d.event_id) as object_id
    from webhook_deliveries d
    where d.endpoint_id = ${endpointId} and d.account_id = ${o.accountId} and d.livemode = ${o.livemode}
      and d.status = 'FAILED' and d.created_at >= to_timestamp(${since})
      and not exists (select 1 from webhook_deliveries l where l.event_id = d.event_id and l.endpoint_id = d.endpoint_id and l.id > d.id)
    order by d.id limit ${limit}`;
}

/** The endpoints that have had a delivery of this event (a sample event's only ever has one). */
export async function endpointsOfEvent(db: Db, eventId: string): Promise<string[]> {
  const rows = await db<{ endpoint_id: string }[]>`select distinct endpoint_id from webhook_deliveries where event_id = ${eventId}`;
  return rows.map((r) => r.endpoint_id);
}

/**
 * The delivery backlog for the metrics, in two index reads (webhook_deliveries_pending_created and
 * webhook_deliveries_due hold only PENDING rows): how old the oldest PENDING delivery is, and how
 * long the most overdue one has been due; 0 for either when there is none.
 */
export async function deliveryBacklog(db: Db): Promise<{ oldestPendingSeconds: number; overdueSeconds: number }> {
  const [row] = await db<{ oldest: number; overdue: number }[]>`
    select coalesce(extract(epoch from now() - (select min(created_at) from webhook_deliveries where status = 'PENDING')), 0)::float8 as oldest,
           greatest(coalesce(extract(epoch from now() - (select min(next_attempt_at) from webhook_deliveries where status = 'PENDING')), 0), 0)::float8 as overdue`;
  return { oldestPendingSeconds: Math.max(row!.oldest, 0), overdueSeconds: row!.overdue };
}
