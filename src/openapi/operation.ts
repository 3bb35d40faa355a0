import type { z } from 'zod';
import type { IdPrefix } from '../lib/ids.ts';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/** The groups of the reference, in its order, each with the text above its operations. */
export const TAGS = [
  { name: 'Account', description: 'The merchant behind the API key, and its branding (shared by test and live mode).' },
  {
    name: 'API keys',
    description:
      'The secret keys of the calling key\'s account and mode. A secret is shown once, by the create or roll that made it; `Idempotency-Key` is refused on these calls, since a replayed answer would have to keep the secret.',
  },
  { name: 'Customers', description: 'The people and businesses that are billed.' },
  { name: 'Payment links', description: 'Public URLs that collect a payment with no merchant backend work: one-time (`SINGLE`) or reusable (`MULTI`).' },
  { name: 'Checkout sessions', description: 'One payment in progress, paid on the hosted page at its `url` (3-D Secure, declines and receipts included).' },
  { name: 'Payments', description: 'Each attempt to charge a card on the hosted page. Read-only: payments are made by payers.' },
  { name: 'Refunds', description: 'All or part of a SUCCEEDED payment given back, through the processor.' },
  { name: 'Disputes', description: 'Chargebacks opened by the processor; the merchant answers with evidence or accepts the loss.' },
  { name: 'Invoices', description: 'Bills for line items: DRAFT, finalized (OPEN, numbered), sent to the customer and paid on the hosted invoice page.' },
  {
    name: 'Installment plans',
    description:
      'A payment link or an invoice paid in parts: the payer chooses a plan on the page and pays the first part on the hosted checkout; the card is kept at the processor and the other parts are charged on their dates, retried on failure.',
  },
  { name: 'Search', description: 'Customers, payments, invoices and checkout sessions found by a query (docs/search.md): `email:"ada@example.com" AND amount>=4000`.' },
  { name: 'Exports', description: 'CSV files of payments, refunds, disputes, customers, invoices and installment parts, for a date range and the list filters, streamed (docs/exports.md).' },
  { name: 'Reports', description: 'Gross volume, refunds, disputes and net per day, week or month and currency, from rollups kept with every payment (docs/reports.md).' },
  {
    name: 'Fraud',
    description:
      'Block lists and rules over a payment\'s attributes (amount, currency, card country, email domain, attempts of one card or client address within a window), evaluated on the hosted page before the card is charged: `block`, `review` (authorised and held for a person) or `allow` (docs/fraud.md).',
  },
  { name: 'Emails', description: 'Receipts, refund notices, invoices and reminders the service sent (or, without `SMTP_URL`, only logged).' },
  { name: 'Webhook endpoints', description: 'Where the service POSTs signed events; their deliveries, retries and test events.' },
  { name: 'Events', description: 'Every event the service recorded, newest first, for catching up after downtime; and resending them.' },
  { name: 'Audit log', description: 'Who changed what (dashboard users and API keys): sign-ins, the team, keys, endpoints, refunds, disputes, settings. Append-only, kept at least a year.' },
  {
    name: 'Test helpers',
    description:
      'Test mode only (a live key is refused with 403): what a payer, the clock or a cardholder would do, done on request through the same code, so the same objects, events, webhooks and emails follow.',
  },
  { name: 'Reference', description: 'This document.' },
] as const;
export type Tag = (typeof TAGS)[number]['name'];

export interface Operation {
  method: Method;
  /** As OpenAPI writes it: `/v1/customers/{id}`. */
  path: string;
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** What `{id}` of the path names: its prefix and the resource. */
  id?: readonly [IdPrefix, string];
  query?: z.ZodObject;
  body?: z.ZodObject;
  /** The body of the success answer (200). */
  response: z.ZodType;
  /** The success answer is a CSV file (`text/csv`), `response` describing it as a string. */
  csv?: boolean;
  /** Error statuses this operation answers beyond those of its kind (document.ts, `errorStatuses`). */
  errors?: number[];
  /** False: an `Idempotency-Key` header is refused (POST only). */
  idempotency?: boolean;
  /** False: no API key is needed. */
  auth?: boolean;
}
