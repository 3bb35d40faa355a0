import { z } from 'zod';
import { currencySchema, MAX_AMOUNT } from '../lib/currency.ts';
import { customerFilter, listQuerySchema } from '../lib/pagination.ts';
import { isHttpUrl, metadataSchema, text, unixSeconds } from '../lib/validate.ts';

const httpUrl = text(2048).refine(isHttpUrl, 'must be an absolute http or https URL');
const email = text(254).pipe(z.email('must be a valid email address'));
const int = () => z.number().int('must be an integer');

const LineItem = z.strictObject({
  name: text(250).min(1, 'must not be empty').meta({ description: 'What is sold, as the payer sees it.' }),
  quantity: int().positive('must be a positive integer').max(1_000_000, 'must be at most 1000000').meta({ description: 'How many.' }),
  amount: int()
    .min(0, 'must be zero or more')
    .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`)
    .meta({ description: 'The price of one, in the smallest currency unit.' }),
});
export type LineItem = z.infer<typeof LineItem>;

/** The request field is `amount`; `amount_cents` is output only, so the strict schema refuses it. */
export const CreateSession = z.strictObject({
  amount: int()
    .positive('must be a positive integer')
    .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`)
    .optional()
    .meta({ description: 'The total to charge, in the smallest currency unit; optional with `line_items` (then their sum, which it must equal if given). Responses carry it as `amount_cents`.' }),
  currency: currencySchema,
  success_url: httpUrl,
  cancel_url: httpUrl.nullable().optional(),
  line_items: z.array(LineItem).min(1, 'must hold at least one item').max(100, 'holds at most 100 items').nullable().optional(),
  customer_id: z.string().nullable().optional(),
  customer_email: email.nullable().optional(),
  description: text(1000).nullable().optional(),
  metadata: metadataSchema.nullable().optional(),
  expires_at: unixSeconds().optional(),
});
export type CreateSessionInput = z.infer<typeof CreateSession>;

/** The expire call takes no parameters. */
export const ExpireSession = z.strictObject({});

export const SESSION_STATUSES = ['OPEN', 'COMPLETE', 'EXPIRED'] as const;

export const ListSessions = listQuerySchema('cs', {
  status: z.enum(SESSION_STATUSES).optional(),
  ...customerFilter,
});
export type ListSessions = z.infer<typeof ListSessions>;
