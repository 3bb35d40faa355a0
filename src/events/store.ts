import type { Db, Sql, TxSql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';
import { nowUnix } from '../lib/time.ts';
import type { EventType } from './catalogue.ts';
import { API_VERSION, type ApiObject, type EventObject, type StoredEvent } from './presenter.ts';

export interface EventRow extends StoredEvent {
  account_id: string;
  /** A sample sent by a test event (webhooks' sendSampleEvent): readable by id, never listed. */
  sample: boolean;
}

export interface EventInput {
  accountId: string;
  type: EventType;
  /** The resource as the API presents it. */
  object: ApiObject;
}

/**
 * Inserts events (one statement for any number) and returns them as the API shows them. Only the
 * outbox writer calls this (webhooks/outbox.ts), in the transaction of the state change, so that an
 * event never exists without its webhook deliveries. `sample` marks them as samples of a test event
 * (the webhooks component then delivers them to one endpoint only): `listEvents` leaves them out.
 */
export async function insertEvents(db: TxSql, inputs: readonly EventInput[], opts: { sample?: boolean } = {}): Promise<EventObject[]> {
  if (inputs.length === 0) return [];
  const created = nowUnix();
  const events: EventObject[] = inputs.map((i) => ({
    id: newId('evt'),
    object: 'event',
    livemode: i.object.livemode,
    type: i.type,
    api_version: API_VERSION,
    data: { object: i.object },
    created,
  }));
  // json, not jsonb: the column keeps the text as written, so fields stay in the presenter's order.
  await db`
    insert into events (id, account_id, livemode, type, api_version, data, created_at, sample)
    select e.id, e.account_id, e.livemode, e.type, ${API_VERSION}, e.data::json, to_timestamp(${created}), ${opts.sample ?? false}
    from unnest(${events.map((e) => e.id)}::text[], ${inputs.map((i) => i.accountId)}::text[],
                ${events.map((e) => String(e.livemode))}::text[]::boolean[], ${events.map((e) => e.type)}::text[],
                ${events.map((e) => JSON.stringify(e.data))}::text[]) as e (id, account_id, livemode, type, data)`;
  return events;
}

export interface EventFilters {
  type?: string | undefined;
  createdGte?: number | undefined;
  createdLte?: number | undefined;
}

export async function findEvent(db: Db, o: Owner, id: string): Promise<EventRow | undefined> {
  const [row] = await db<EventRow[]>`
    select * from events where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/**
 * Events stay listable for RETENTION_EVENTS_DAYS (30: the spec's at least 30 days), then their
 * day's partition is dropped (src/retention/); the newest partitions are read first. Samples of test
 * events are not listed: a merchant polling events must never see a made-up payment.
 */
export async function listEvents(db: Db, o: Owner, p: PageParams, f: EventFilters): Promise<EventRow[]> {
  const k = keyset(db as Sql, p);
  return db<EventRow[]>`
    select * from events
    where account_id = ${o.accountId} and livemode = ${o.livemode} and not sample
      ${f.type !== undefined ? db`and type = ${f.type}` : db``}
      ${f.createdGte !== undefined ? db`and created_at >= to_timestamp(${f.createdGte})` : db``}
      ${f.createdLte !== undefined ? db`and created_at <= to_timestamp(${f.createdLte})` : db``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}
