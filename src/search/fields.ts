import { isCurrency, MAX_AMOUNT } from '../lib/currency.ts';
import { isId } from '../lib/ids.ts';
import { SearchSyntaxError, type Op, type SearchNode } from './parse.ts';

/**
 * The fields each resource's search knows and what their values must be (docs/search.md): the
 * second, per-resource pass over a parsed query, still pure. It turns clauses into typed conditions
 * that store.ts writes as SQL, each backed by an index of migration 0037.
 */
export const RESOURCES = ['customers', 'payments', 'invoices', 'checkout-sessions'] as const;
export type Resource = (typeof RESOURCES)[number];

type FieldType =
  /** Exact, case-insensitive. */
  | { type: 'email' }
  /** One of a closed set, compared in capitals (`succeeded` finds SUCCEEDED). */
  | { type: 'enum'; values: readonly string[] }
  /** An amount in the smallest currency unit: all comparisons. */
  | { type: 'amount' }
  /** Unix seconds: all comparisons; `:` is the whole second. */
  | { type: 'time' }
  | { type: 'currency' }
  | { type: 'last4' }
  /** The id of an object (`customer:cus_…`). */
  | { type: 'id'; prefix: 'cus' }
  /** Exact text (an invoice number). */
  | { type: 'exact' }
  /** Part of the text, case-insensitive, at least 3 characters (a trigram index answers it). */
  | { type: 'contains' }
  /** `metadata["key"]:value`. */
  | { type: 'metadata' };

const created = { type: 'time' } as const;
const metadata = { type: 'metadata' } as const;
const currency = { type: 'currency' } as const;
const customer = { type: 'id', prefix: 'cus' } as const;

export const FIELDS: Record<Resource, Record<string, FieldType>> = {
  customers: { email: { type: 'email' }, name: { type: 'contains' }, created, metadata },
  payments: {
    email: { type: 'email' },
    status: { type: 'enum', values: ['PENDING', 'SUCCEEDED', 'FAILED'] },
    amount: { type: 'amount' },
    currency,
    last4: { type: 'last4' },
    customer,
    created,
    metadata,
  },
  invoices: {
    email: { type: 'email' },
    status: { type: 'enum', values: ['DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE'] },
    total: { type: 'amount' },
    number: { type: 'exact' },
    currency,
    customer,
    created,
    metadata,
  },
  'checkout-sessions': {
    email: { type: 'email' },
    status: { type: 'enum', values: ['OPEN', 'COMPLETE', 'EXPIRED'] },
    amount: { type: 'amount' },
    currency,
    customer,
    created,
    metadata,
  },
};

/** The smallest free-text (and `name:`) search: shorter text has no trigram and would read every row. */
export const TEXT_MIN_LENGTH = 3;
export const VALUE_MAX_LENGTH = 254;

export type Comparison = '=' | '>' | '>=' | '<' | '<=';

export type Condition =
  | { kind: 'and' | 'or'; children: Condition[] }
  | { kind: 'text'; value: string }
  | { kind: 'email' | 'enum' | 'currency' | 'last4' | 'id' | 'exact' | 'contains'; field: string; value: string }
  | { kind: 'amount'; field: string; op: Comparison; value: number }
  | { kind: 'time'; field: string; op: Comparison; value: Date }
  | { kind: 'metadata'; key: string; value: string };

const COMPARE: Record<Op, Comparison> = { ':': '=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

const fail = (message: string, position: number): never => {
  throw new SearchSyntaxError(message, position);
};

/** Checks a parsed query against a resource's fields; throws SearchSyntaxError at the clause or value at fault. */
export function toCondition(resource: Resource, node: SearchNode): Condition {
  const fields = FIELDS[resource];
  const go = (n: SearchNode): Condition => {
    if (n.kind === 'and' || n.kind === 'or') return { kind: n.kind, children: n.children.map(go) };
    if (n.value.length > VALUE_MAX_LENGTH) fail(`A value has at most ${VALUE_MAX_LENGTH} characters (position ${n.position}).`, n.position);
    if (n.kind === 'text') {
      if ([...n.value.trim()].length < TEXT_MIN_LENGTH) fail(`Free text needs at least ${TEXT_MIN_LENGTH} characters (position ${n.position}).`, n.position);
      return { kind: 'text', value: n.value.trim() };
    }
    const f = Object.hasOwn(fields, n.field) ? fields[n.field]! : undefined;
    if (!f) return fail(`Unknown field "${n.field}" at position ${n.position}: ${resource} can be searched by ${Object.keys(fields).join(', ')}.`, n.position);
    if (f.type === 'metadata') {
      if (n.key === undefined) fail(`metadata takes a key: metadata["order_id"]:"1042" (position ${n.position}).`, n.position);
      if (n.op !== ':') fail(`metadata is compared with ":" only (position ${n.position}).`, n.position);
      return { kind: 'metadata', key: n.key!, value: n.value };
    }
    if (n.key !== undefined) fail(`Only metadata takes a key in brackets (position ${n.position}).`, n.position);
    const at = n.valuePosition;
    if (f.type === 'amount' || f.type === 'time') {
      if (!/^\d{1,12}$/.test(n.value)) fail(`${n.field} must be a whole number${f.type === 'time' ? ' of Unix seconds' : ' in the smallest currency unit'} (position ${at}).`, at);
      const v = Number(n.value);
      if (f.type === 'amount') return { kind: 'amount', field: n.field, op: COMPARE[n.op], value: Math.min(v, MAX_AMOUNT + 1) };
      if (v > 253402300799) fail(`${n.field} is past the year 9999 (position ${at}).`, at);
      return { kind: 'time', field: n.field, op: COMPARE[n.op], value: new Date(v * 1000) };
    }
    if (n.op !== ':') fail(`${n.field} is compared with ":" only (position ${n.position}).`, n.position);
    switch (f.type) {
      case 'email':
        if (!n.value.includes('@')) fail(`email must be a whole email address (position ${at}); free text finds part of one.`, at);
        return { kind: 'email', field: n.field, value: n.value.toLowerCase() };
      case 'enum': {
        const v = n.value.toUpperCase();
        if (!f.values.includes(v)) fail(`${n.field} is one of ${f.values.join(', ')} (position ${at}).`, at);
        return { kind: 'enum', field: n.field, value: v };
      }
      case 'currency': {
        const v = n.value.toLowerCase();
        if (!isCurrency(v)) fail(`currency must be an ISO 4217 code such as eur (position ${at}).`, at);
        return { kind: 'currency', field: n.field, value: v };
      }
      case 'last4':
        if (!/^\d{4}$/.test(n.value)) fail(`last4 is four digits (position ${at}).`, at);
        return { kind: 'last4', field: n.field, value: n.value };
      case 'id':
        if (!isId(f.prefix, n.value)) fail(`${n.field} must be the id of a ${f.prefix}_ object (position ${at}).`, at);
        return { kind: 'id', field: n.field, value: n.value };
      case 'exact':
        return { kind: 'exact', field: n.field, value: n.value };
      case 'contains':
        if ([...n.value.trim()].length < TEXT_MIN_LENGTH) fail(`${n.field} needs at least ${TEXT_MIN_LENGTH} characters (position ${at}).`, at);
        return { kind: 'contains', field: n.field, value: n.value.trim() };
    }
  };
  return go(node);
}
