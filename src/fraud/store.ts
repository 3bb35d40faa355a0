import type { Db, Sql } from '../db/sql.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';
import type { PaymentFacts, TrialRow, VelocityAttribute } from './evaluate.ts';
import type { Condition, FraudAction, ListKind } from './schema.ts';

export interface FraudRuleRow {
  id: string;
  account_id: string;
  livemode: boolean;
  name: string;
  action: FraudAction;
  conditions: Condition[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface FraudListItemRow {
  id: string;
  account_id: string;
  livemode: boolean;
  kind: ListKind;
  value: string;
  network: string | null;
  note: string | null;
  created_at: Date;
}

export async function insertRule(sql: Db, o: Owner, r: Pick<FraudRuleRow, 'id' | 'name' | 'action' | 'conditions' | 'enabled'>): Promise<FraudRuleRow> {
  const [row] = await sql<FraudRuleRow[]>`
    insert into fraud_rules (id, account_id, livemode, name, action, conditions, enabled)
    values (${r.id}, ${o.accountId}, ${o.livemode}, ${r.name}, ${r.action}, ${sql.json(r.conditions as never)}, ${r.enabled})
    returning *`;
  return row!;
}

export async function findRule(sql: Db, o: Owner, id: string): Promise<FraudRuleRow | undefined> {
  const [row] = await sql<FraudRuleRow[]>`select * from fraud_rules where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

export async function lockRule(sql: Db, o: Owner, id: string): Promise<FraudRuleRow | undefined> {
  const [row] = await sql<FraudRuleRow[]>`
    select * from fraud_rules where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} for update`;
  return row;
}

export async function updateRule(sql: Db, o: Owner, id: string, r: Pick<FraudRuleRow, 'name' | 'action' | 'conditions' | 'enabled'>): Promise<FraudRuleRow> {
  const [row] = await sql<FraudRuleRow[]>`
    update fraud_rules set name = ${r.name}, action = ${r.action}, conditions = ${sql.json(r.conditions as never)},
      enabled = ${r.enabled}, updated_at = now()
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
    returning *`;
  return row!;
}

export async function deleteRule(sql: Db, o: Owner, id: string): Promise<FraudRuleRow | undefined> {
  const [row] = await sql<FraudRuleRow[]>`
    delete from fraud_rules where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode} returning *`;
  return row;
}

export async function listRules(sql: Sql, o: Owner, p: PageParams): Promise<FraudRuleRow[]> {
  const k = keyset(sql, p);
  return sql<FraudRuleRow[]>`
    select * from fraud_rules where account_id = ${o.accountId} and livemode = ${o.livemode} ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** The enabled rules of an account and mode, oldest first: few, read whole on each attempt. */
export async function enabledRules(sql: Db, o: Owner): Promise<FraudRuleRow[]> {
  return sql<FraudRuleRow[]>`
    select * from fraud_rules where account_id = ${o.accountId} and livemode = ${o.livemode} and enabled order by id limit 200`;
}

export async function insertListItem(sql: Db, o: Owner, i: Pick<FraudListItemRow, 'id' | 'kind' | 'value' | 'network' | 'note'>): Promise<FraudListItemRow | undefined> {
  const [row] = await sql<FraudListItemRow[]>`
    insert into fraud_list_items (id, account_id, livemode, kind, value, network, note)
    values (${i.id}, ${o.accountId}, ${o.livemode}, ${i.kind}, ${i.value}, ${i.network}::cidr, ${i.note})
    on conflict (account_id, livemode, kind, value) do nothing
    returning id, account_id, livemode, kind, value, network::text as network, note, created_at`;
  return row;
}

const ITEM_COLUMNS = (sql: Db) => sql`id, account_id, livemode, kind, value, network::text as network, note, created_at`;

export async function findListItem(sql: Db, o: Owner, id: string): Promise<FraudListItemRow | undefined> {
  const [row] = await sql<FraudListItemRow[]>`
    select ${ITEM_COLUMNS(sql)} from fraud_list_items where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

export async function deleteListItem(sql: Db, o: Owner, id: string): Promise<FraudListItemRow | undefined> {
  const [row] = await sql<FraudListItemRow[]>`
    delete from fraud_list_items where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
    returning id, account_id, livemode, kind, value, network::text as network, note, created_at`;
  return row;
}

export async function listListItems(sql: Sql, o: Owner, p: PageParams & { kind?: ListKind | undefined }): Promise<FraudListItemRow[]> {
  const k = keyset(sql, p);
  return sql<FraudListItemRow[]>`
    select ${ITEM_COLUMNS(sql)} from fraud_list_items
    where account_id = ${o.accountId} and livemode = ${o.livemode} ${p.kind ? sql`and kind = ${p.kind}` : sql``} ${k.where}
    ${k.order} limit ${k.limit}`;
}

/** The oldest block list entry that matches the attempt, if any: by the unique index per kind, the networks by containment. */
export async function listHit(sql: Db, o: Owner, f: PaymentFacts): Promise<{ id: string; kind: string } | undefined> {
  const [row] = await sql<{ id: string; kind: string }[]>`
    select id, kind from fraud_list_items
    where account_id = ${o.accountId} and livemode = ${o.livemode} and (
      (kind = 'email' and value = ${f.email?.toLowerCase() ?? null})
      or (kind = 'card_fingerprint' and value = ${f.card_fingerprint})
      or (kind = 'card_country' and value = ${f.card_country?.toUpperCase() ?? null})
      or (kind = 'client_ip' and ${f.client_ip}::inet is not null and network >>= ${f.client_ip}::inet))
    order by id limit 1`;
  return row;
}

/**
 * Earlier attempts of one card or client address within the window, in this account and mode:
 * an index range scan (payments_fraud_card, payments_fraud_ip), counted up to `cap` (a rule's
 * threshold is far below it, so a card-testing run costs the same as a quiet day).
 */
export const COUNT_CAP = 10_000;
export async function countAttempts(sql: Db, o: Owner, attribute: VelocityAttribute, value: string, windowSeconds: number): Promise<number> {
  const since = sql`now() - make_interval(secs => ${windowSeconds})`;
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select 1 from payments
      where account_id = ${o.accountId} and livemode = ${o.livemode}
        and ${attribute === 'card_attempts' ? sql`card_fingerprint = ${value}` : sql`client_ip = ${value}::inet`}
        and created_at > ${since}
      limit 10000) t`;
  return row!.n;
}

/** How many past payments a trial reads at most (newest first): the answer says when it stopped there. */
export const TRIAL_LIMIT = 20_000;

/** The payments of the last `days` days of an account and mode, oldest first, at most TRIAL_LIMIT (the newest), by payments_search_created. */
export async function trialRows(sql: Sql, o: Owner, since: Date): Promise<TrialRow[]> {
  const rows = await sql<TrialRow[]>`
    select id, amount_cents::int as amount_cents, currency, email, card_fingerprint, card_country, host(client_ip) as client_ip, created_at
    from payments
    where account_id = ${o.accountId} and livemode = ${o.livemode} and created_at >= ${since}
    order by created_at desc limit 20000`;
  return rows.reverse();
}
