import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { text } from '../lib/validate.ts';

/**
 * The rules' structured form (docs/fraud.md): a list of conditions, every one of which must hold,
 * each naming one attribute of the payment. No expression language to parse: what the API accepts
 * is exactly what is evaluated, and an unknown attribute or operator is a 400 naming it.
 */
export const ACTIONS = ['allow', 'block', 'review'] as const;
export type FraudAction = (typeof ACTIONS)[number];

export const NUMBER_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'eq', 'ne'] as const;
export type NumberOperator = (typeof NUMBER_OPERATORS)[number];
export const SET_OPERATORS = ['in', 'not_in'] as const;

/** Velocity windows: a minute to a week. */
export const MIN_WINDOW_SECONDS = 60;
export const MAX_WINDOW_SECONDS = 7 * 24 * 3600;

const numberOperator = z.enum(NUMBER_OPERATORS).meta({ description: '`gt`, `gte`, `lt`, `lte`, `eq` or `ne`.' });
const count = z.number().int().min(0).max(1_000_000);

const AmountCondition = z.strictObject({
  attribute: z.literal('amount_cents'),
  operator: numberOperator,
  value: z.number().int().min(0).max(99_999_999_999).meta({ description: 'Minor units (cents), compared with the payment’s amount whatever its currency: combine with a `currency` condition.' }),
});

const SetOf = <A extends string>(attribute: A, item: z.ZodString, description: string) =>
  z.strictObject({
    attribute: z.literal(attribute),
    operator: z.enum(SET_OPERATORS).meta({ description: '`in` or `not_in`.' }),
    values: z.array(item).min(1).max(100).meta({ description }),
  });

// No transforms here: the same schema describes the rule object the API answers (OpenAPI output).
// Case is normalised by `normaliseConditions` (service.ts) once validated.
const CurrencyCondition = SetOf('currency', z.string().regex(/^[A-Za-z]{3}$/, 'must be three-letter currency codes'), 'ISO 4217 codes (`usd`, `eur`), compared in lowercase.');
const CountryCondition = SetOf(
  'card_country',
  z.string().regex(/^[A-Za-z]{2}$/, 'must be two-letter ISO 3166 country codes'),
  "ISO 3166-1 alpha-2 codes of the card's issuing country (`US`, `FR`), compared in uppercase.",
);
const EmailDomainCondition = SetOf(
  'email_domain',
  z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be domain names such as example.com'),
  "Domains of the payer's email (the part after `@`), compared in lowercase.",
);

/** The conditions as stored and evaluated: codes and domains in the case they are compared in. */
export function normaliseConditions(conditions: readonly Condition[]): Condition[] {
  return conditions.map((c) => {
    if (c.attribute === 'card_country') return { ...c, values: c.values.map((v) => v.toUpperCase()) };
    if (c.attribute === 'currency' || c.attribute === 'email_domain') return { ...c, values: c.values.map((v) => v.toLowerCase()) };
    return c;
  });
}

const velocity = <A extends string>(attribute: A, what: string) =>
  z.strictObject({
    attribute: z.literal(attribute),
    window_seconds: z
      .number()
      .int()
      .min(MIN_WINDOW_SECONDS, `must be at least ${MIN_WINDOW_SECONDS}`)
      .max(MAX_WINDOW_SECONDS, `must be at most ${MAX_WINDOW_SECONDS}`)
      .meta({ description: 'How far back attempts are counted: 60 seconds to 7 days.' }),
    operator: numberOperator,
    value: count.meta({ description: `The number of earlier attempts ${what} within the window (this one not counted), any outcome.` }),
  });

const CardAttempts = velocity('card_attempts', 'with the same card (its fingerprint)');
const ClientAttempts = velocity('client_ip_attempts', 'from the same client address');

export const Condition = z
  .discriminatedUnion('attribute', [AmountCondition, CurrencyCondition, CountryCondition, EmailDomainCondition, CardAttempts, ClientAttempts])
  .meta({
    id: 'fraud_condition',
    description:
      'One condition of a rule: `amount_cents` and the velocity counts (`card_attempts`, `client_ip_attempts`, with `window_seconds`) take a number operator and `value`; `currency`, `card_country` and `email_domain` take `in`/`not_in` and `values`.',
  });
export type Condition = z.output<typeof Condition>;
export type ConditionAttribute = Condition['attribute'];

const conditions = z.array(Condition).min(1, 'must hold at least one condition').max(10, 'must hold at most 10 conditions').meta({ description: 'Every condition must hold for the rule to match (AND).' });
const action = z.enum(ACTIONS).meta({ description: '`block`: declined before the processor is called; `review`: authorised and held for a person; `allow`: skips block lists and every block and review rule.' });
const name = text(200).min(1, 'must not be empty').meta({ description: 'Shown in the dashboard and in the reason recorded on a payment.' });

export const CreateFraudRule = z.strictObject({
  name,
  action,
  conditions,
  enabled: z.boolean().optional().meta({ description: 'Default true. A disabled rule is kept but never evaluated.' }),
});
export type CreateFraudRule = z.output<typeof CreateFraudRule>;

export const UpdateFraudRule = z.strictObject({
  name: name.optional(),
  action: action.optional(),
  conditions: conditions.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateFraudRule = z.output<typeof UpdateFraudRule>;

export const TryFraudRule = z.strictObject({
  action: action.optional().default('block'),
  conditions,
});
export type TryFraudRule = z.output<typeof TryFraudRule>;

export const ListFraudRules = listQuerySchema('frl', {});

export const LIST_KINDS = ['email', 'card_fingerprint', 'card_country', 'client_ip'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

export const CreateFraudListItem = z.strictObject({
  kind: z.enum(LIST_KINDS).meta({ description: '`email`, `card_fingerprint`, `card_country` or `client_ip` (an address or a CIDR network).' }),
  value: text(200).min(1, 'must not be empty').meta({ description: 'What is blocked: `ada@example.com`, `fp_…`, `NG`, `203.0.113.7` or `203.0.113.0/24`.', example: '203.0.113.0/24' }),
  note: text(500).nullable().optional().meta({ description: 'Why it is listed (for the team).' }),
});
export type CreateFraudListItem = z.output<typeof CreateFraudListItem>;

export const ListFraudListItems = listQuerySchema('fli', {
  kind: z.enum(LIST_KINDS).optional().meta({ description: 'Only entries of this kind.' }),
});
