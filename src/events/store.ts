import type { Sql, TxSql } from '../db/sql.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';

type Db = Sql | TxSql;

export interface EventRow {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  api_version: string;
  data: unknown;
  created_at: Date;
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

/** Events are never deleted, so every event stays listable (spec: at least 30 days). */
export async function listEvents(db: Db, o: Owner, p: PageParams, f: EventFilters): Promise<EventRow[]> {
  const k = keyset(db as Sql, p);
  return db<EventRow[]>`
    select * from events
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${f.type !== undefined ? db`and type = ${f.type}` : db``}
      ${f.createdGte !== undefined ? db`and created_at >= to_timestamp(${f.createdGte})` : db``}
      ${f.createdLte !== undefined ? db`and created_at <= to_timestamp(${f.createdLte})` : db``}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

export type { Owner };
