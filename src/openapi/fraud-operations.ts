import { FraudListItemObject, FraudRuleObject, FraudRuleTrialObject } from '../fraud/presenter.ts';
import { CreateFraudListItem, CreateFraudRule, ListFraudListItems, ListFraudRules, TryFraudRule, UpdateFraudRule } from '../fraud/schema.ts';
import { deletedObject, listOf } from '../lib/objects.ts';
import type { Operation } from './operation.ts';

const RULE = ['frl', 'fraud rule'] as const;
const ITEM = ['fli', 'block list entry'] as const;

/** `/v1/fraud/rules` and `/v1/fraud/lists` (issue 27; docs/fraud.md). */
export const FRAUD_OPERATIONS: readonly Operation[] = [
  {
    method: 'post',
    path: '/v1/fraud/rules',
    operationId: 'createFraudRule',
    tag: 'Fraud',
    summary: 'Create a fraud rule',
    description: 'Evaluated on the hosted page before the card is charged, from the next attempt on. Order: a matching `allow` rule wins, then block list entries and `block` rules, then `review` rules.',
    body: CreateFraudRule,
    response: FraudRuleObject,
  },
  { method: 'get', path: '/v1/fraud/rules', operationId: 'listFraudRules', tag: 'Fraud', summary: 'List fraud rules', query: ListFraudRules, response: listOf(FraudRuleObject) },
  {
    method: 'post',
    path: '/v1/fraud/rules/try',
    operationId: 'tryFraudRule',
    tag: 'Fraud',
    summary: 'Try a draft rule',
    description: 'Evaluates the conditions against the last 30 days of payments of the account and mode (velocity counted as the page would have counted it then) and answers how many it would have matched: "would have blocked 12 payments". Nothing is saved.',
    body: TryFraudRule,
    response: FraudRuleTrialObject,
  },
  { method: 'get', path: '/v1/fraud/rules/{id}', operationId: 'retrieveFraudRule', tag: 'Fraud', summary: 'Retrieve a fraud rule', id: RULE, response: FraudRuleObject },
  { method: 'patch', path: '/v1/fraud/rules/{id}', operationId: 'updateFraudRule', tag: 'Fraud', summary: 'Update a fraud rule', description: 'Sets the fields sent; `enabled: false` keeps the rule without evaluating it.', id: RULE, body: UpdateFraudRule, response: FraudRuleObject },
  { method: 'delete', path: '/v1/fraud/rules/{id}', operationId: 'deleteFraudRule', tag: 'Fraud', summary: 'Delete a fraud rule', description: 'Payments it decided keep its id and reason.', id: RULE, response: deletedObject('fraud_rule', 'frl') },
  {
    method: 'post',
    path: '/v1/fraud/lists',
    operationId: 'createFraudListItem',
    tag: 'Fraud',
    summary: 'Add a block list entry',
    description: 'An email, a card fingerprint (a payment\'s `card.fingerprint`), a card country, or a client address or CIDR network. The same value twice answers 409.',
    body: CreateFraudListItem,
    response: FraudListItemObject,
    errors: [409],
  },
  { method: 'get', path: '/v1/fraud/lists', operationId: 'listFraudListItems', tag: 'Fraud', summary: 'List block list entries', query: ListFraudListItems, response: listOf(FraudListItemObject) },
  { method: 'get', path: '/v1/fraud/lists/{id}', operationId: 'retrieveFraudListItem', tag: 'Fraud', summary: 'Retrieve a block list entry', id: ITEM, response: FraudListItemObject },
  { method: 'delete', path: '/v1/fraud/lists/{id}', operationId: 'deleteFraudListItem', tag: 'Fraud', summary: 'Remove a block list entry', id: ITEM, response: deletedObject('fraud_list_item', 'fli') },
];
