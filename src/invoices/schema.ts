import { z } from 'zod';
import { currencySchema, MAX_AMOUNT } from '../lib/currency.ts';
import { customerFilter, listQuerySchema } from '../lib/pagination.ts';
import { metadataSchema, text, unixSeconds } from '../lib/validate.ts';
import { installmentOptionsSchema } from '../lib/installments.ts';

export const INVOICE_STATUSES = ['DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE'] as const;

/** The most lines one invoice holds. */
export const MAX_LINE_ITEMS = 100;

const int = () => z.number({ error: 'must be an integer' }).int('must be an integer');

/** One line, as on a checkout session: a name, a quantity, a unit amount in the smallest currency unit. */
const LineItem = z.strictObject({
  name: text(250).min(1, 'must not be empty').meta({ description: 'What is billed, as the customer sees it.' }),
  quantity: int().positive('must be a positive integer').max(1_000_000, 'must be at most 1000000').meta({ description: 'How many.' }),
  amount: int()
    .min(0, 'must be zero or more')
    .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`)
    .meta({ description: 'The price of one, in the smallest currency unit.' }),
});

/** Writable on create, and on update while the invoice is a DRAFT. */
const writable = {
  customer_id: text(100).min(1, 'must not be empty'),
  currency: currencySchema,
  line_items: z.array(LineItem).max(MAX_LINE_ITEMS, `holds at most ${MAX_LINE_ITEMS} items`),
  description: text(1000).nullable(),
  // Past dates are accepted: an invoice that is already overdue can be recorded.
  due_date: unixSeconds().nullable(),
  allow_partial_payments: z.boolean(),
  minimum_payment_cents: int().positive('must be a positive integer').max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`).nullable(),
  allow_installments: z.boolean().meta({ description: 'The hosted page offers to pay what is due in installments (`installment_options`).' }),
  installment_options: installmentOptionsSchema.nullable(),
  metadata: metadataSchema.nullable(),
};

export const CreateInvoice = z.strictObject(writable).partial().required({ customer_id: true, currency: true });
export type CreateInvoice = z.infer<typeof CreateInvoice>;

export const UpdateInvoice = z.strictObject(writable).partial();
export type UpdateInvoice = z.infer<typeof UpdateInvoice>;

/** finalize, send, void and mark-uncollectible take no parameters. */
export const NoParams = z.strictObject({});

export const ListInvoices = listQuerySchema('in', {
  status: z.enum(INVOICE_STATUSES).optional(),
  ...customerFilter,
});
export type ListInvoices = z.infer<typeof ListInvoices>;
