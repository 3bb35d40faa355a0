import type { Cell } from './csv.ts';
import { decimalAmount, isoUtc } from './csv.ts';

/**
 * The columns of each export, in order: stable (docs/exports.md lists them; a new column is only
 * ever added at the end). Times are UTC, ISO 8601; every amount is given twice, in the smallest
 * currency unit (`…_cents`) and as a decimal of its currency.
 */
export const DATASETS = ['payments', 'refunds', 'disputes', 'customers', 'invoices', 'installment-parts'] as const;
export type Dataset = (typeof DATASETS)[number];

type Row = Record<string, unknown>;
type Column = [name: string, value: (r: Row) => Cell];

const text = (k: string): Column => [k, (r) => r[k] as string | null];
const num = (k: string): Column => [k, (r) => (r[k] === null ? null : Number(r[k]))];
const time = (name: string, k = name): Column => [name, (r) => isoUtc(r[k] as Date | null)];
const amount = (name: string, k: string): Column[] => [
  [`${name}_cents`, (r) => Number(r[k])],
  [name, (r) => decimalAmount(Number(r[k]), r.currency as string)],
];

export const COLUMNS: Record<Dataset, Column[]> = {
  payments: [
    text('id'), time('created', 'created_at'), text('status'), ...amount('amount', 'amount_cents'), text('currency'),
    ...amount('amount_refunded', 'amount_refunded_cents'), ['disputed', (r) => Boolean(r.disputed)],
    text('customer_id'), text('email'), text('billing_name'), text('card_brand'), text('card_last4'), text('description'),
    text('failure_code'), text('checkout_session_id'), text('payment_link_id'), text('invoice_id'), text('installment_plan_id'),
    time('succeeded_at'), time('failed_at'),
  ],
  refunds: [
    text('id'), time('created', 'created_at'), text('status'), ...amount('amount', 'amount_cents'), text('currency'),
    text('payment_id'), text('reason'), text('failure_reason'),
  ],
  disputes: [
    text('id'), time('created', 'created_at'), text('status'), ...amount('amount', 'amount_cents'), text('currency'),
    text('payment_id'), text('reason'), time('evidence_due_by'), time('submitted_at'), time('closed_at'),
  ],
  customers: [
    text('id'), time('created', 'created_at'), text('email'), text('first_name'), text('last_name'), text('company_name'), text('phone'),
  ],
  invoices: [
    text('id'), time('created', 'created_at'), text('number'), text('status'), text('customer_id'), text('currency'),
    ...amount('total', 'total_cents'), ...amount('amount_paid', 'amount_paid_cents'), ...amount('amount_due', 'amount_due_cents'),
    time('due_date'), time('finalized_at'), time('paid_at'), time('voided_at'),
  ],
  'installment-parts': [
    text('plan_id'), num('number'), time('plan_created', 'created_at'), text('status'), ...amount('amount', 'amount_cents'), text('currency'),
    text('customer_id'), text('email'), time('due_at'), num('attempt_count'), text('payment_id'), time('paid_at'),
  ],
};

export const header = (d: Dataset): string[] => COLUMNS[d].map(([name]) => name);
export const cells = (d: Dataset, row: Row): Cell[] => COLUMNS[d].map(([, value]) => value(row));
