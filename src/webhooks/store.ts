import type { Db, Sql, TxSql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';

export interface EndpointRow {
  id: string;
  account_id: string;
  livemode: boolean;
  url: string;
  description: string | null;
  enabled_events: string[];
  is_active: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  /** Health (issue 26, health.ts): the start of the current run of failed attempts, their number, its warning, the service's disabling. */
  failing_since: Date | null;
  failed_attempts: number;
  failure_warned_at: Date | null;
  disabled_at: Date | null;
  /** Custom headers sent with every delivery (issue 26): write-only, shown masked (presenter.ts). */
  headers: Record<string, string>;
  /** Deliveries per second at most (issue 26, throttle.ts); null: unthrottled. */
  rate_limit: number | null;
  /** Deliveries about one object go in event order (issue 26, ordering.ts). */
  ordered: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Serialises endpoint creation per account and mode, so the 16-endpoint cap holds under concurrency. */
export async function lockOwner(tx: TxSql, o: Owner): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext(${o.accountId} || ${String(o.livemode)}))`;
}

export async function countEndpoints(db: Db, o: Owner): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from webhook_endpoints where account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row!.n;
}

export async function insertEndpoint(
  db: Db,
  o: Owner,
  input: Pick<EndpointRow, 'url' | 'enabled_events' | 'description' | 'secret' | 'headers' | 'rate_limit' | 'ordered'>,
): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    insert into webhook_endpoints (id, account_id, livemode, url, description, enabled_events, secret, headers, rate_limit, ordered)
    values (${newId('we')}, ${o.accountId}, ${o.livemode}, ${input.url}, ${input.description},
            ${input.enabled_events}::text[], ${input.secret}, ${db.json(input.headers)}, ${input.rate_limit}, ${input.ordered})
    returning *`;
  return row!;
}

export async function findEndpoint(db: Db, o: Owner, id: string, forUpdate = false): Promise<EndpointRow | undefined> {
  const [row] = await db<EndpointRow[]>`
    select * from webhook_endpoints where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
    ${forUpdate ? db`for update` : db``}`;
  return row;
}

export async function listEndpoints(db: Db, o: Owner, p: PageParams): Promise<EndpointRow[]> {
  const k = keyset(db as Sql, p);
  return db<EndpointRow[]>`
    select * from webhook_endpoints where account_id = ${o.accountId} and livemode = ${o.livemode} ${k.where}
    ${k.order} limit ${k.limit}`;
}

export type EndpointFields = Pick<EndpointRow, 'url' | 'description' | 'enabled_events' | 'is_active' | 'headers' | 'rate_limit' | 'ordered'>;

export async function updateEndpoint(db: Db, id: string, f: EndpointFields): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    update webhook_endpoints set url = ${f.url}, description = ${f.description},
      enabled_events = ${f.enabled_events}::text[], is_active = ${f.is_active}, headers = ${db.json(f.headers)},
      rate_limit = ${f.rate_limit}, ordered = ${f.ordered}, updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

/** The old secret keeps signing until `overlapMs` from now; a secret older than that is dropped. */
export async function rotateSecret(db: Db, id: string, secret: string, overlapMs: number): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret = secret,
      previous_secret_expires_at = now() + make_interval(secs => ${overlapMs / 1000}),
      secret = ${secret},
      updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  await db`delete from webhook_endpoints where id = ${id}`;
  await db`delete from webhook_endpoint_hourly where endpoint_id = ${id}`;
}

/** The secrets an attempt signs with now: the current one, then the previous one during its overlap. */
export function signingSecrets(e: Pick<EndpointRow, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>, now = new Date()): string[] {
  return e.previous_secret && e.previous_secret_expires_at && e.previous_secret_expires_at > now
    ? [e.secret, e.previous_secret]
    : [e.secret];
}

export type { Owner };
