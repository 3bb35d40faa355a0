import { z } from 'zod';
import { created, livemode, objectId, objectName, updated, unixTime } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { describeRule } from './evaluate.ts';
import { ACTIONS, Condition, LIST_KINDS } from './schema.ts';
import type { FraudListItemRow, FraudRuleRow } from './store.ts';

export const FraudRuleObject = z
  .strictObject({
    id: objectId('frl', 'fraud rule'),
    object: objectName('fraud_rule'),
    livemode: livemode(),
    name: z.string().meta({ description: 'The name given to the rule.', example: 'Card testing' }),
    action: z.enum(ACTIONS).meta({ description: '`allow`, `block` or `review`.' }),
    conditions: z.array(Condition).meta({ description: 'Every condition must hold for the rule to match.' }),
    description: z.string().meta({ description: 'The conditions in words, as recorded in the reason of a payment the rule decided.', example: 'client_ip_attempts in 600s >= 5' }),
    enabled: z.boolean().meta({ description: 'A disabled rule is never evaluated.' }),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'fraud_rule', description: 'A rule over the attributes of a payment, evaluated on the hosted page before the card is charged (docs/fraud.md).' });

export function presentFraudRule(r: FraudRuleRow): z.infer<typeof FraudRuleObject> {
  return {
    id: r.id,
    object: 'fraud_rule',
    livemode: r.livemode,
    name: r.name,
    action: r.action,
    conditions: r.conditions,
    description: describeRule(r),
    enabled: r.enabled,
    created: unix(r.created_at),
    updated: unix(r.updated_at),
  };
}

export const FraudListItemObject = z
  .strictObject({
    id: objectId('fli', 'block list entry'),
    object: objectName('fraud_list_item'),
    livemode: livemode(),
    kind: z.enum(LIST_KINDS).meta({ description: '`email`, `card_fingerprint`, `card_country` or `client_ip`.' }),
    value: z.string().meta({ description: 'What is blocked, normalised: an email in lowercase, a country in uppercase, an address or network in CIDR form.', example: '203.0.113.0/24' }),
    note: z.string().nullable().meta({ description: 'Why it is listed.' }),
    created: created(),
  })
  .meta({ id: 'fraud_list_item', description: 'A block list entry: a payment whose email, card, card country or client address matches is declined before the card is charged (unless an `allow` rule matches).' });

export function presentFraudListItem(i: FraudListItemRow): z.infer<typeof FraudListItemObject> {
  return { id: i.id, object: 'fraud_list_item', livemode: i.livemode, kind: i.kind, value: i.value, note: i.note, created: unix(i.created_at) };
}

export const FraudRuleTrialObject = z
  .strictObject({
    object: objectName('fraud_rule_trial'),
    action: z.enum(ACTIONS).meta({ description: 'The draft rule’s action.' }),
    description: z.string().meta({ description: 'The draft conditions in words.', example: 'amount_cents >= 50000 and card_country in [NG]' }),
    matched: z.number().int().meta({ description: 'How many of the payments read the rule would have matched ("would have blocked 12 payments").', example: 12 }),
    evaluated: z.number().int().meta({ description: 'How many payments were read.', example: 3400 }),
    truncated: z.boolean().meta({ description: 'True when more payments were made in the period than a trial reads (20,000): only the newest were read.' }),
    since: unixTime('The start of the period read (30 days back).'),
    examples: z.array(z.string()).meta({ description: 'Up to 10 of the matched payments, newest first.', example: ['pay_01JZ8Q4W6X0N3C1V7E2K5M9R4T'] }),
  })
  .meta({ id: 'fraud_rule_trial', description: 'What a draft rule would have matched among the last 30 days of payments of the account and mode.' });
