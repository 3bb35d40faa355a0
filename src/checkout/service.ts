import type { Logger } from 'pino';
import { checkCustomerRef } from '../customers/refs.ts';
import { findCustomer } from '../customers/store.ts';
import type { Db } from '../db/sql.ts';
import { withTx } from '../db/tx.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { ownerOf } from '../lib/owner.ts';
import { metadataOnCreate } from '../lib/validate.ts';
import { inFlightOfSession } from '../payments/store.ts';
import type { Services } from '../services.ts';
import { expireInTx, expireOnRead } from './expiry.ts';
import { MAX_AMOUNT } from '../lib/currency.ts';
import type { InstallmentChoice } from '../lib/installments.ts';
import type { CreateSessionInput, ListSessions } from './schema.ts';
import * as store from './store.ts';
import type { Owner, SessionRow } from './store.ts';

export type { CreateSessionInput } from './schema.ts';
export type { SessionRow } from './store.ts';

const DAY_SECONDS = 24 * 3600;

/**
 * The email the hosted page prefills: the attached customer's for a session the merchant made
 * for them (the API, an invoice, a card update), else the session's customer_email. A payment
 * link's session is opened by whoever has the link: the customer a link is attached to is never
 * shown to them (issue 21), so its email is what that payer typed on the link's page, if anything.
 */
export async function pageEmail(sql: Db, row: SessionRow): Promise<string | null> {
  const customer = row.customer_id && !row.payment_link_id ? await findCustomer(sql, ownerOf(row), row.customer_id) : undefined;
  return customer?.email ?? row.customer_email ?? null;
}

/** `amount` alone, `line_items` alone (amount is their sum), or both when they agree. */
function resolveAmount(input: CreateSessionInput): number {
  const items = input.line_items ?? null;
  if (!items) {
    if (input.amount === undefined) throw new ApiError('parameter_missing', 'Missing required param: amount (or line_items).', 'amount');
    return input.amount;
  }
  const sum = items.reduce((total, i) => total + i.quantity * i.amount, 0);
  if (input.amount !== undefined && input.amount !== sum) {
    throw invalidParam('amount', `amount (${input.amount}) must equal the sum of line_items (${sum}).`);
  }
  if (sum <= 0) throw invalidParam('line_items', 'The line_items must add up to a positive amount.');
  if (sum > MAX_AMOUNT) throw invalidParam('line_items', `The line_items add up to ${sum}, more than the maximum ${MAX_AMOUNT}.`);
  return sum;
}

function resolveExpiry(s: Services, input: CreateSessionInput, createdUnix: number): number {
  if (input.expires_at === undefined) return createdUnix + DAY_SECONDS;
  const min = createdUnix + s.config.checkoutMinExpirySeconds;
  const max = createdUnix + DAY_SECONDS;
  if (input.expires_at < min || input.expires_at > max) {
    throw invalidParam(
      'expires_at',
      `expires_at must be between ${s.config.checkoutMinExpirySeconds} seconds and 24 hours after creation (between ${min} and ${max}).`,
    );
  }
  return input.expires_at;
}

/**
 * Creates an OPEN, unpaid session; the expiry sweeper (jobs.ts) expires it at expires_at. The API route and payment
 * links and the hosted invoice page (with `extra`) all create sessions here, so both obey the same rules.
 */
export async function createSession(
  s: Services,
  owner: Owner,
  input: CreateSessionInput,
  extra: { paymentLinkId?: string; linkSource?: string; description?: string; invoiceId?: string; installment?: InstallmentChoice } = {},
): Promise<SessionRow> {
  const now = new Date();
  const createdUnix = Math.floor(now.getTime() / 1000);
  const amount = resolveAmount(input);
  const expiresAt = resolveExpiry(s, input, createdUnix);
  await checkCustomerRef(s.sql, owner, input.customer_id);
  // One insert and no event: no transaction needed, and no job: the row's expires_at is the schedule.
  const row = await store.insertSession(s.sql, owner, {
    id: newId('cs'),
    amount_cents: amount,
    currency: input.currency,
    success_url: input.success_url,
    cancel_url: input.cancel_url ?? null,
    customer_id: input.customer_id ?? null,
    customer_email: input.customer_email ?? null,
    line_items: input.line_items ?? null,
    description: input.description ?? extra.description ?? null,
    metadata: metadataOnCreate(input.metadata),
    payment_link_id: extra.paymentLinkId ?? null,
    link_source: extra.linkSource ?? null,
    invoice_id: extra.invoiceId ?? null,
    installment: extra.installment ?? null,
    expires_at: new Date(expiresAt * 1000),
    created_at: now,
  });
  s.metrics.checkoutSessions('created', owner.livemode);
  return row;
}

/**
 * A setup session (mode `setup`): the hosted checkout collects a card (3-D Secure included) and
 * the processor saves it, with no charge (payment_status `no_payment_required`); the participants'
 * afterSetup then use it (installments: the plan's new card). Expires in an hour.
 */
export async function createSetupSession(
  s: Services,
  owner: Owner,
  input: { currency: string; returnUrl: string; customerId: string | null; customerEmail: string | null; description: string; installment: InstallmentChoice },
): Promise<SessionRow> {
  const now = new Date();
  const row = await store.insertSession(s.sql, owner, {
    id: newId('cs'),
    amount_cents: 0,
    currency: input.currency,
    success_url: input.returnUrl,
    cancel_url: input.returnUrl,
    customer_id: input.customerId,
    customer_email: input.customerEmail,
    line_items: null,
    description: input.description,
    metadata: {},
    payment_link_id: null,
    link_source: null,
    mode: 'setup',
    installment: input.installment,
    expires_at: new Date(now.getTime() + SETUP_SESSION_SECONDS * 1000),
    created_at: now,
  });
  s.metrics.checkoutSessions('created', owner.livemode);
  return row;
}

/** How long a setup session stays open. */
export const SETUP_SESSION_SECONDS = 3600;

export async function retrieveSession(s: Services, owner: Owner, id: string, log: Logger): Promise<SessionRow> {
  const row = await store.findSession(s.sql, owner, id);
  if (!row) throw resourceMissing('checkout_session', id);
  return expireOnRead(s, row, log);
}

/** A list first expires that account's sessions past expires_at (a bounded batch), then reads. */
export async function listSessions(s: Services, owner: Owner, q: ListSessions, log: Logger): Promise<SessionRow[]> {
  const due = await store.dueSessionIds(s.sql, owner, new Date(), 200);
  for (const id of due) {
    await withTx(s, log, (tx) => expireInTx(tx, s, owner, id, new Date()));
  }
  return store.listSessions(s.sql, owner, q);
}

/** POST /expire: OPEN to EXPIRED now; any other status, or a payment in flight, is a 400 saying so. */
export async function expireSessionNow(s: Services, owner: Owner, id: string, log: Logger): Promise<SessionRow> {
  const current = await retrieveSession(s, owner, id, log);
  if (current.status !== 'OPEN') {
    throw new ApiError('resource_invalid_state', `Only an OPEN checkout session can be expired; this one is ${current.status}.`);
  }
  const expired = await withTx(s, log, (tx) => expireInTx(tx, s, owner, id, null));
  if (expired) return expired;
  if (await inFlightOfSession(s.sql, owner, id)) {
    throw new ApiError(
      'resource_invalid_state',
      'A payment on this checkout session is in progress: it cannot be expired until the processor has answered. Try again in a minute.',
    );
  }
  const now = await store.findSession(s.sql, owner, id);
  throw new ApiError('resource_invalid_state', `Only an OPEN checkout session can be expired; this one is ${now?.status ?? 'gone'}.`);
}
