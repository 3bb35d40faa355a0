import type postgres from 'postgres';
import type { Sql } from '../db/sql.ts';
import type { SessionRow } from '../checkout/store.ts';
import type { CustomerRow } from '../customers/store.ts';
import type { InvoiceRow } from '../invoices/store.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { Owner } from '../lib/owner.ts';
import type { PaymentRow } from '../payments/store.ts';
import type { Condition, Resource } from './fields.ts';

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * SQL written from a checked query (fields.ts): every value is a bound parameter, every column and
 * operator comes from the fixed tables below. Each clause matches an index of migration 0037 (the
 * text expressions are the indexed ones, character for character); the statement always filters on
 * the owner's account and mode and pages by id like every list (DESIGN 2).
 */
export interface SearchRows {
  customers: CustomerRow;
  payments: PaymentRow;
  invoices: InvoiceRow;
  'checkout-sessions': SessionRow;
}

const TABLE: Record<Resource, string> = {
  customers: 'customers',
  payments: 'payments',
  invoices: 'invoices',
  'checkout-sessions': 'checkout_sessions',
};

/** `%`, `_` and `\` of the text are matched as themselves. */
export const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** How many customers free text on invoices and sessions looks through (docs/search.md). */
export const CUSTOMER_MATCHES = 1000;

const OPS = { '=': '=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' } as const;

/**
 * A checkout session's metadata holds `doc` (one key, never empty). `metadata <> '{}'` holds for
 * every row that matches: it is stated so that the planner may use the partial index
 * checkout_sessions_search_metadata (migration 0042), whose predicate it is.
 */
function metadataOf(sql: Sql, doc: ReturnType<Sql['json']>): Fragment {
  return sql`(metadata <> '{}'::jsonb and metadata @> ${doc})`;
}

function condition(sql: Sql, o: Owner, resource: Resource, c: Condition): Fragment {
  const owner = sql`account_id = ${o.accountId} and livemode = ${o.livemode}`;
  // The customers of the account whose name or email holds the text: the newest CUSTOMER_MATCHES of
  // them, an array made first (an InitPlan), so that a common word ("gmail") reads the customers by
  // their page index until enough are found, and a rare one their trigram index, never the table.
  const customersMatching = (text: string) =>
    sql`array(select id from customers where ${owner}
      and lower(first_name || ' ' || last_name || ' ' || coalesce(company_name, '') || ' ' || email) like ${likePattern(text)}
      order by id desc limit ${sql.unsafe(String(CUSTOMER_MATCHES))})`;
  const customersWithEmail = (email: string) => sql`select id from customers where ${owner} and lower(email) = ${email}`;
  const op = (v: keyof typeof OPS) => sql.unsafe(OPS[v]);

  switch (c.kind) {
    case 'and':
    case 'or': {
      const joiner = sql.unsafe(c.kind === 'and' ? ' and ' : ' or ');
      const parts = c.children.map((child) => condition(sql, o, resource, child));
      return sql`(${parts.reduce((acc, p) => sql`${acc}${joiner}${p}`)})`;
    }
    case 'text':
      switch (resource) {
        case 'payments':
          return sql`lower(coalesce(billing_name, '') || ' ' || coalesce(email, '')) like ${likePattern(c.value)}`;
        case 'customers':
          return sql`lower(first_name || ' ' || last_name || ' ' || coalesce(company_name, '') || ' ' || email) like ${likePattern(c.value)}`;
        case 'invoices':
          return sql`customer_id = any(${customersMatching(c.value)})`;
        case 'checkout-sessions':
          // `customer_email is not null` and `customer_id is not null`: the predicates of the
          // partial indexes of migration 0042 (they hold for every row the clauses match).
          return sql`((customer_email is not null and lower(coalesce(customer_email, '')) like ${likePattern(c.value)})
            or (customer_id is not null and customer_id = any(${customersMatching(c.value)})))`;
      }
      break;
    case 'email':
      switch (resource) {
        case 'payments':
          return sql`lower(email) = ${c.value}`;
        case 'customers':
          return sql`lower(email) = ${c.value}`;
        case 'invoices':
          return sql`customer_id in (${customersWithEmail(c.value)})`;
        case 'checkout-sessions':
          return sql`((customer_email is not null and lower(customer_email) = ${c.value}) or (customer_id is not null and customer_id in (${customersWithEmail(c.value)})))`;
      }
      break;
    case 'contains':
      // customers' name
      return sql`lower(first_name || ' ' || last_name) like ${likePattern(c.value)}`;
    case 'enum':
      return sql`status = ${c.value}`;
    case 'currency':
      return sql`currency = ${c.value}`;
    case 'last4':
      return sql`card_last4 = ${c.value}`;
    case 'id':
      return sql`customer_id = ${c.value}`;
    case 'exact':
      return sql`number = ${c.value}`;
    case 'amount':
      return resource === 'invoices' ? sql`total_cents ${op(c.op)} ${c.value}` : sql`amount_cents ${op(c.op)} ${c.value}`;
    case 'time':
      // `created:t` is the whole second t.
      return c.op === '='
        ? sql`(created_at >= ${c.value} and created_at < ${new Date(c.value.getTime() + 1000)})`
        : sql`created_at ${op(c.op)} ${c.value}`;
    case 'metadata': {
      const doc = sql.json({ [c.key]: c.value });
      // A payment carries no metadata of its own: its checkout session's is searched. The sessions
      // are an array made first (an InitPlan), so that `= any(…)` reads the payments' session index
      // even under an OR (an `in (subquery)` there made Postgres read every payment: bench/search.ts).
      return resource === 'payments'
        ? sql`checkout_session_id = any(array(select id from checkout_sessions where ${owner} and ${metadataOf(sql, doc)}))`
        : resource === 'checkout-sessions' ? metadataOf(sql, doc) : sql`metadata @> ${doc}`;
    }
  }
  throw new Error(`no SQL for ${c.kind} on ${resource}`);
}

/**
 * The statement of a search, without running it (the EXPLAIN tests read its plan). The ids of the
 * page are chosen first (an InitPlan), then their rows read by the primary key: the choosing reads
 * only what it needs, so a clause whose index holds the id (an amount, a card's last four digits)
 * is answered from that index alone, its matches sorted by id, and only the page's rows are read from
 * the table (bench/search.ts, `amount>=9990`: the primary key read newest first until ten match before).
 */
export function searchStatement<R extends Resource>(sql: Sql, o: Owner, resource: R, c: Condition, p: PageParams) {
  const k = keyset(sql, p);
  const table: string = TABLE[resource];
  return sql<SearchRows[R][]>`
    select * from ${sql(table)}
    where id = any(array(
      select id from ${sql(table)}
      where account_id = ${o.accountId} and livemode = ${o.livemode}
        and ${condition(sql, o, resource, c)}
        ${k.where}
      ${k.order} limit ${k.limit}))
    ${k.order}`;
}

/**
 * Runs a search with a plan made for its values, never the generic plan of a prepared statement:
 * after five runs of one statement Postgres may keep a plan made without the values, and for a
 * search the values decide everything (`created<t` that matches nothing, a rare word, a common one).
 * Measured at a million payments (bench/search.ts): generic plans read the whole primary key for
 * several shapes (seconds), the plans for the values answer within the target. The setting is
 * local to a read-only transaction, so it holds behind a transaction pooler too.
 */
export async function search<R extends Resource>(sql: Sql, o: Owner, resource: R, c: Condition, p: PageParams): Promise<SearchRows[R][]> {
  return sql.begin('read only', async (tx) => {
    await tx`select set_config('plan_cache_mode', 'force_custom_plan', true)`;
    return searchStatement(tx as unknown as Sql, o, resource, c, p);
  }) as Promise<SearchRows[R][]>;
}
