import { checkCustomerRef } from '../customers/refs.ts';
import { createSession, type SessionRow } from '../checkout/service.ts';
import { linkPlacesTaken } from '../payments/store.ts';
import type { TxSql } from '../db/sql.ts';
import { withTx } from '../db/tx.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { nowUnix } from '../lib/time.ts';
import { mergeMetadata, metadataOnCreate } from '../lib/validate.ts';
import type { Services } from '../services.ts';
import { splitAmount, type PlanChoice } from '../lib/installments.ts';
import type { CreatePaymentLink, LinkSource, LinkType, UpdatePaymentLink } from './schema.ts';
import * as store from './store.ts';
import type { LinkChanges, Owner, PaymentLinkRow, SourceTotals } from './store.ts';
import { ownerOf } from '../lib/owner.ts';

/** How many successful payments a link takes: one for SINGLE, quantity_limit (or no limit) for MULTI. */
export function paymentLimit(type: LinkType, quantityLimit: number | null): number | null {
  return type === 'SINGLE' ? 1 : quantityLimit;
}

export function isExpired(row: Pick<PaymentLinkRow, 'expires_at'>, now = Date.now()): boolean {
  return row.expires_at !== null && row.expires_at.getTime() <= now;
}

export interface Closed {
  /** A word for the page's badge. */
  badge: 'Ended' | 'Deactivated' | 'Expired';
  /** What the payer is told. */
  message: string;
}

/** Why a payer cannot pay this link right now, or null when they can. */
export function closedReason(row: PaymentLinkRow, succeeded: number, now = Date.now()): Closed | null {
  if (row.status === 'CANCELLED') return { badge: 'Deactivated', message: 'This payment link has been deactivated by the merchant.' };
  const limit = paymentLimit(row.type, row.quantity_limit);
  if (row.status === 'COMPLETED' || (limit !== null && succeeded >= limit)) {
    return { badge: 'Ended', message: 'This payment link has ended: it accepts no more payments.' };
  }
  if (isExpired(row, now)) return { badge: 'Expired', message: 'This payment link has expired: it accepts no more payments.' };
  return null;
}

function checkSingleLimit(type: LinkType, quantityLimit: number | null | undefined): void {
  if (type === 'SINGLE' && quantityLimit != null && quantityLimit !== 1) {
    throw invalidParam('quantity_limit', 'A SINGLE link takes exactly one payment: leave quantity_limit empty or set it to 1.');
  }
}

function checkFuture(expiresAt: number | null | undefined): void {
  if (expiresAt != null && expiresAt <= nowUnix()) throw invalidParam('expires_at', 'expires_at must lie in the future.');
}

/**
 * Slugs are unique in the whole deployment, first come, and stay with the account that first used
 * one. Taken by another link of this account or by another account: the same answer, so that it
 * tells nothing about other accounts (the slug's page is public anyway, its owner is not).
 */
const slugTaken = (slug: string) => invalidParam('slug', `The slug '${slug}' is not available: choose another one.`);

async function claimSlug(tx: TxSql, o: Owner, slug: string | null | undefined): Promise<void> {
  if (slug && !(await store.claimSlug(tx, o.accountId, slug))) throw slugTaken(slug);
}

/** A slug held by another link surfaces as the unique index's violation (also when two claims race). */
async function slugChecked<T>(slug: string | null | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const e = err as { code?: string; constraint_name?: string };
    if (slug && e.code === '23505' && e.constraint_name === 'payment_links_slug') throw slugTaken(slug);
    throw err;
  }
}

export async function createLink(s: Services, o: Owner, input: CreatePaymentLink): Promise<PaymentLinkRow> {
  const type = input.type ?? 'MULTI';
  checkSingleLimit(type, input.quantity_limit);
  checkFuture(input.expires_at);
  return slugChecked(input.slug, () =>
    withTx(s, s.log, async (tx) => {
      await checkCustomerRef(tx.sql, o, input.customer_id);
      await claimSlug(tx.sql, o, input.slug);
      const row = await store.insertLink(tx.sql, o, {
        id: newId('pl'),
        type,
        name: input.name ?? null,
        slug: input.slug ?? null,
        amount_cents: input.amount,
        currency: input.currency,
        description: input.description ?? null,
        customer_id: input.customer_id ?? null,
        collect_name: input.collect_name ?? false,
        collect_email: input.collect_email ?? false,
        collect_phone: input.collect_phone ?? false,
        installment_enabled: input.installment_enabled ?? false,
        installment_options: input.installment_options ?? null,
        quantity_limit: input.quantity_limit ?? null,
        expires_at: input.expires_at != null ? new Date(input.expires_at * 1000) : null,
        metadata: metadataOnCreate(input.metadata),
      });
      return row;
    }),
  );
}

/**
 * The changes a PATCH makes, or the 400 it gets. `succeeded` is the exact count of successful
 * payments, read under the link's row lock, so no payment can slip in between check and write.
 */
/**
 * `succeeded` counts the link's SUCCEEDED payments; `taken` adds the attempts in flight, whose
 * places are reserved while the processor is called (participant.ts): a limit may not go below
 * them, or those charges would overshoot it.
 */
export function planUpdate(cur: PaymentLinkRow, patch: UpdatePaymentLink, paid: { succeeded: number; taken: number }, now = Date.now()): LinkChanges {
  const { succeeded, taken } = paid;
  const c: LinkChanges = {};
  const frozen = (param: string) => {
    if (succeeded > 0) throw invalidParam(param, `${param} cannot change once the link has a successful payment.`);
  };
  if (patch.amount !== undefined && patch.amount !== cur.amount_cents) {
    frozen('amount');
    c.amount_cents = patch.amount;
  }
  if (patch.currency !== undefined && patch.currency !== cur.currency) {
    frozen('currency');
    c.currency = patch.currency;
  }
  if (patch.type !== undefined && patch.type !== cur.type) {
    frozen('type');
    c.type = patch.type;
  }

  for (const k of ['name', 'description', 'slug', 'customer_id'] as const) {
    if (patch[k] !== undefined && patch[k] !== cur[k]) c[k] = patch[k];
  }
  for (const k of ['collect_name', 'collect_email', 'collect_phone', 'installment_enabled'] as const) {
    if (patch[k] !== undefined && patch[k] !== cur[k]) c[k] = patch[k];
  }
  if (patch.metadata !== undefined) c.metadata = mergeMetadata(cur.metadata, patch.metadata);
  if (patch.installment_options !== undefined && JSON.stringify(patch.installment_options) !== JSON.stringify(cur.installment_options)) {
    c.installment_options = patch.installment_options;
  }

  const oldLimit = paymentLimit(cur.type, cur.quantity_limit);
  const ended = cur.status === 'COMPLETED' || isExpired(cur, now) || (oldLimit !== null && succeeded >= oldLimit);
  const endedError = (what: string) =>
    new ApiError('resource_invalid_state', `This payment link has ended (completed or expired): ${what} can no longer change.`);

  if (patch.quantity_limit !== undefined && patch.quantity_limit !== cur.quantity_limit) {
    if (ended) throw endedError('quantity_limit');
    if (patch.quantity_limit !== null && patch.quantity_limit < taken) {
      const inFlight = taken - succeeded;
      const what = inFlight > 0 ? `${succeeded} successful payments and ${inFlight} in progress` : `${succeeded} successful payments`;
      throw invalidParam('quantity_limit', `quantity_limit cannot go below the link's ${what}.`);
    }
    c.quantity_limit = patch.quantity_limit;
  }
  checkSingleLimit(c.type ?? cur.type, c.quantity_limit !== undefined ? c.quantity_limit : cur.quantity_limit);

  if (patch.expires_at !== undefined && patch.expires_at !== (cur.expires_at ? cur.expires_at.getTime() / 1000 : null)) {
    if (ended) throw endedError('expires_at');
    checkFuture(patch.expires_at);
    c.expires_at = patch.expires_at === null ? null : new Date(patch.expires_at * 1000);
  }

  if (patch.status !== undefined && patch.status !== cur.status) {
    if (cur.status === 'COMPLETED') throw endedError('status');
    if (patch.status === 'ACTIVE' && ended) throw new ApiError('resource_invalid_state', 'This payment link has ended (completed or expired) and cannot be reactivated.');
    c.status = patch.status;
  }

  // Lowering the limit to the number already paid ends the link, as the last payment would have.
  const newLimit = paymentLimit(c.type ?? cur.type, c.quantity_limit !== undefined ? c.quantity_limit : cur.quantity_limit);
  if (cur.status !== 'COMPLETED' && newLimit !== null && succeeded >= newLimit && succeeded > 0) c.status = 'COMPLETED';
  return c;
}

export async function updateLink(s: Services, o: Owner, id: string, patch: UpdatePaymentLink): Promise<PaymentLinkRow> {
  return slugChecked(patch.slug, () =>
    withTx(s, s.log, async (tx) => {
      const cur = await store.lockLink(tx.sql, o, id);
      if (!cur) throw resourceMissing('payment_link', id);
      const paid = { succeeded: await store.succeededPayments(tx.sql, id), taken: await linkPlacesTaken(tx.sql, id) };
      const changes = planUpdate(cur, patch, paid);
      if (Object.keys(changes).length === 0) return cur;
      if (changes.customer_id !== undefined) await checkCustomerRef(tx.sql, o, changes.customer_id);
      await claimSlug(tx.sql, o, changes.slug);
      return store.updateLink(tx.sql, id, changes);
    }),
  );
}

export async function getLink(s: Services, o: Owner, id: string): Promise<PaymentLinkRow> {
  const row = await store.findLink(s.sql, o, id);
  if (!row) throw resourceMissing('payment_link', id);
  return row;
}

export async function linkAnalytics(s: Services, o: Owner, id: string): Promise<{ link: PaymentLinkRow; bySource: SourceTotals[] }> {
  const link = await getLink(s, o, id);
  return { link, bySource: await store.analyticsBySource(s.sql, o, id) };
}

/** What a payer typed on the link page, for the fields the link collects. */
export interface Payer {
  name: string;
  email: string;
  phone: string;
}

/**
 * Opens a checkout session for one payer of the link, through the same code path as
 * POST /v1/checkout/sessions. The payer's name and phone travel in the session's metadata
 * (payer_name, payer_phone), the email as customer_email. With `plan` (the payer chose to pay in
 * installments) the session is the plan's first part: its amount, and the plan it carries.
 */
export async function startCheckout(s: Services, link: PaymentLinkRow, source: LinkSource, payer: Payer, plan: PlanChoice | null = null): Promise<SessionRow> {
  const metadata: Record<string, string> = {};
  if (link.collect_name && payer.name) metadata.payer_name = payer.name;
  if (link.collect_phone && payer.phone) metadata.payer_phone = payer.phone;
  // The link id, not its slug: the slug may change while the payer is on the checkout page.
  const page = `${s.config.publicLinkUrl}/${link.id}`;
  return createSession(
    s,
    ownerOf(link),
    {
      // A plan's first part: the link's price split as the plan splits it (remainder on the first part).
      amount: plan ? splitAmount(plan.total_cents, plan.count)[0]! : link.amount_cents,
      currency: link.currency,
      success_url: `${page}/paid?session={CHECKOUT_SESSION_ID}`,
      cancel_url: source === 'DIRECT' ? page : `${page}?src=${source}`,
      customer_id: link.customer_id,
      customer_email: plan ? plan.email : link.collect_email && payer.email ? payer.email : null,
      metadata,
    },
    {
      paymentLinkId: link.id,
      linkSource: source,
      description: link.description ?? link.name ?? undefined,
      ...(plan ? { installment: plan } : {}),
    },
  );
}
