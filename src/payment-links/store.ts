import type { Db, Sql, TxSql } from '../db/sql.ts';
import { emptyFragment } from '../lib/fragments.ts';
import { isId } from '../lib/ids.ts';
import { keyset, type PageParams } from '../lib/pagination.ts';
import type { LinkSource, LinkStatus, LinkType } from './schema.ts';
import type { Owner } from '../lib/owner.ts';
import type { InstallmentOption } from '../lib/installments.ts';


export interface PaymentLinkRow {
  id: string;
  account_id: string;
  livemode: boolean;
  type: LinkType;
  status: LinkStatus;
  name: string | null;
  slug: string | null;
  amount_cents: number;
  currency: string;
  description: string | null;
  customer_id: string | null;
  collect_name: boolean;
  collect_email: boolean;
  collect_phone: boolean;
  installment_enabled: boolean;
  /** The plans offered when installment_enabled; null: the default (DEFAULT_INSTALLMENT_OPTIONS). */
  installment_options: InstallmentOption[] | null;
  quantity_limit: number | null;
  view_count: number;
  payment_count: number;
  total_collected_cents: number;
  expires_at: Date | null;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
  /** The segment after PUBLIC_LINK_URL: the slug, or the id when the link has none. */
  path: string;
}

/** The columns a new link is written with; the rest are the owner's, or start at their defaults. */
export type NewLink = Omit<
  PaymentLinkRow,
  'account_id' | 'livemode' | 'status' | 'view_count' | 'payment_count' | 'total_collected_cents' | 'created_at' | 'updated_at' | 'path'
>;

/** Fields an update may set; every one is a plain column. */
export type LinkChanges = Partial<Omit<NewLink, 'id'> & { status: LinkStatus }>;

// A slug names one link in the whole deployment (migration 0007), so the path never depends on other rows.
const withPath = (sql: Db) => sql`*, coalesce(slug, id) as path`;

export async function insertLink(tx: TxSql, o: Owner, link: NewLink): Promise<PaymentLinkRow> {
  const [row] = await tx<PaymentLinkRow[]>`
    insert into payment_links ${tx({
      ...link,
      account_id: o.accountId,
      livemode: o.livemode,
      metadata: tx.json(link.metadata),
      installment_options: link.installment_options ? tx.json(link.installment_options as never) : null,
    } as Record<string, unknown>)}
    returning ${withPath(tx)}`;
  return row!;
}

export async function findLink(sql: Db, o: Owner, id: string): Promise<PaymentLinkRow | undefined> {
  const [row] = await sql<PaymentLinkRow[]>`
    select ${withPath(sql)} from payment_links
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}`;
  return row;
}

/** The row under a lock that payments on the link and updates of it queue behind. */
export async function lockLink(tx: TxSql, o: Owner, id: string): Promise<PaymentLinkRow | undefined> {
  const [row] = await tx<PaymentLinkRow[]>`
    select ${withPath(tx)} from payment_links
    where id = ${id} and account_id = ${o.accountId} and livemode = ${o.livemode}
    for update`;
  return row;
}

/** Applies a non-empty set of changes. */
export async function updateLink(tx: TxSql, id: string, changes: LinkChanges): Promise<PaymentLinkRow> {
  const set: Record<string, unknown> = { ...changes };
  if (changes.metadata) set.metadata = tx.json(changes.metadata);
  if (changes.installment_options) set.installment_options = tx.json(changes.installment_options as never);
  const [row] = await tx<PaymentLinkRow[]>`
    update payment_links set ${tx(set)}, updated_at = now()
    where id = ${id}
    returning ${withPath(tx)}`;
  return row!;
}

export async function listLinks(
  sql: Sql,
  o: Owner,
  p: PageParams & { status?: LinkStatus | undefined; type?: LinkType | undefined },
): Promise<PaymentLinkRow[]> {
  const k = keyset(sql, p);
  return sql<PaymentLinkRow[]>`
    select ${withPath(sql)} from payment_links
    where account_id = ${o.accountId} and livemode = ${o.livemode}
      ${p.status !== undefined ? sql`and status = ${p.status}` : emptyFragment(sql)}
      ${p.type !== undefined ? sql`and type = ${p.type}` : emptyFragment(sql)}
      ${k.where}
    ${k.order} limit ${k.limit}`;
}

/**
 * The link behind a public URL segment: an id, or a slug (unique in the whole deployment). Two
 * statements written whole (withPath's columns inline): every page load runs one, and a fragment
 * is a query object of its own, built and stringified again on every call.
 */
export async function findPublicLink(sql: Sql, key: string): Promise<PaymentLinkRow | undefined> {
  const [row] = isId('pl', key)
    ? await sql<PaymentLinkRow[]>`select *, coalesce(slug, id) as path from payment_links where id = ${key}`
    : await sql<PaymentLinkRow[]>`select *, coalesce(slug, id) as path from payment_links where slug = ${key}`;
  return row;
}

/**
 * Records `slug` as the account's, or finds it already the account's: false when another account
 * has ever used it. The first claim wins; a concurrent claim of the same slug waits on its row.
 */
export async function claimSlug(tx: TxSql, accountId: string, slug: string): Promise<boolean> {
  const rows = await tx`
    insert into payment_link_slugs (slug, account_id) values (${slug}, ${accountId})
    on conflict (slug) do update set slug = excluded.slug
      where payment_link_slugs.account_id = excluded.account_id
    returning account_id`;
  return rows.length === 1;
}

/**
 * Successful payments counted from the payments rows: exact, unlike the asynchronous payment_count.
 * An installment plan is one payment of the link (its first part), however many parts it has.
 */
export async function succeededPayments(sql: Db, linkId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from payments
    where payment_link_id = ${linkId} and status = 'SUCCEEDED' and coalesce(installment_number, 1) = 1`;
  return row!.n;
}

export interface SourceTotals {
  source: LinkSource;
  views: number;
  payments: number;
  amount_collected_cents: number;
  /** SUCCEEDED refunds of those payments (amount_collected_cents stays gross). */
  amount_refunded_cents: number;
}

/** Views and successful payments per source, counted from the source rows. */
export async function analyticsBySource(sql: Sql, o: Owner, linkId: string): Promise<SourceTotals[]> {
  return sql<SourceTotals[]>`
    with v as (
      select source, sum(views)::bigint as views from payment_link_views
      where payment_link_id = ${linkId} and account_id = ${o.accountId} and livemode = ${o.livemode}
      group by source
    ), p as (
      select coalesce(link_source, 'DIRECT') as source,
        count(*) filter (where coalesce(installment_number, 1) = 1)::bigint as payments, sum(amount_cents)::bigint as amount,
        sum(amount_refunded_cents)::bigint as refunded
      from payments
      where payment_link_id = ${linkId} and status = 'SUCCEEDED' and account_id = ${o.accountId} and livemode = ${o.livemode}
      group by 1
    )
    select s.source, coalesce(v.views, 0) as views, coalesce(p.payments, 0) as payments,
           coalesce(p.amount, 0) as amount_collected_cents, coalesce(p.refunded, 0) as amount_refunded_cents
    from unnest(array['DIRECT', 'EMBED', 'WHATSAPP', 'QR']) with ordinality as s (source, ord)
    left join v on v.source = s.source
    left join p on p.source = s.source
    order by s.ord`;
}

export type { Owner };
