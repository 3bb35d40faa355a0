import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import type { Db, Sql } from '../db/sql.ts';
import { withTx } from '../db/tx.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { Owner } from '../lib/owner.ts';
import { decide, describeRule, ruleMatches, trialCounts, velocityNeeds, type Decision, type PaymentFacts } from './evaluate.ts';
import { normaliseConditions, type CreateFraudListItem, type CreateFraudRule, type TryFraudRule, type UpdateFraudRule } from './schema.ts';
import * as store from './store.ts';
import type { FraudListItemRow, FraudRuleRow } from './store.ts';

export interface FraudCaller {
  actor: AuditActor;
  log: Logger;
}

const audit = (sql: Db, o: Owner, by: FraudCaller, action: string, object: { type: string; id: string }, data: Record<string, unknown>) =>
  recordAudit(sql, { accountId: o.accountId, livemode: o.livemode, actor: by.actor, action, object, data });

const ruleData = (r: FraudRuleRow) => ({ name: r.name, action: r.action, enabled: r.enabled, conditions: describeRule(r) });

export async function createRule(s: { sql: Sql }, o: Owner, input: CreateFraudRule, by: FraudCaller): Promise<FraudRuleRow> {
  return withTx(s, by.log, async (tx) => {
    const row = await store.insertRule(tx.sql, o, { id: newId('frl'), name: input.name, action: input.action, conditions: normaliseConditions(input.conditions), enabled: input.enabled ?? true });
    await audit(tx.sql, o, by, 'fraud_rule.created', { type: 'fraud_rule', id: row.id }, ruleData(row));
    return row;
  });
}

export async function updateRule(s: { sql: Sql }, o: Owner, id: string, patch: UpdateFraudRule, by: FraudCaller): Promise<FraudRuleRow> {
  return withTx(s, by.log, async (tx) => {
    const current = await store.lockRule(tx.sql, o, id);
    if (!current) throw resourceMissing('fraud_rule', id);
    const row = await store.updateRule(tx.sql, o, id, {
      name: patch.name ?? current.name,
      action: patch.action ?? current.action,
      conditions: patch.conditions ? normaliseConditions(patch.conditions) : current.conditions,
      enabled: patch.enabled ?? current.enabled,
    });
    await audit(tx.sql, o, by, 'fraud_rule.updated', { type: 'fraud_rule', id }, ruleData(row));
    return row;
  });
}

export async function deleteRule(s: { sql: Sql }, o: Owner, id: string, by: FraudCaller): Promise<void> {
  await withTx(s, by.log, async (tx) => {
    const row = await store.deleteRule(tx.sql, o, id);
    if (!row) throw resourceMissing('fraud_rule', id);
    await audit(tx.sql, o, by, 'fraud_rule.deleted', { type: 'fraud_rule', id }, ruleData(row));
  });
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An address or network as Postgres' cidr writes it (an address alone is a /32 or /128); null when it is neither. */
export function networkOf(value: string): string | null {
  const [addr, bits, extra] = value.trim().split('/');
  if (extra !== undefined || !addr) return null;
  const family = isIP(addr);
  if (!family) return null;
  const max = family === 4 ? 32 : 128;
  if (bits === undefined) return `${addr}/${max}`;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return `${addr}/${Number(bits)}`;
}

/** The client address as the rules compare it: an address or network (clientAddress gives an IPv6 /64), else null. */
export const clientIpOf = (raw: string | null): string | null => (raw && networkOf(raw) ? raw : null);

/** The entry's value as it is stored and matched: the form each kind is compared in. */
function normalise(input: CreateFraudListItem): { value: string; network: string | null } {
  const v = input.value.trim();
  switch (input.kind) {
    case 'email':
      if (!EMAIL.test(v)) throw invalidParam('value', 'An email entry must be an email address, such as ada@example.com.');
      return { value: v.toLowerCase(), network: null };
    case 'card_fingerprint':
      if (!/^[A-Za-z0-9_]{8,64}$/.test(v)) throw invalidParam('value', 'A card fingerprint is the `card.fingerprint` of a payment, such as fp_3f9c0a1b2d4e5f60.');
      return { value: v, network: null };
    case 'card_country':
      if (!/^[A-Za-z]{2}$/.test(v)) throw invalidParam('value', 'A card country is a two-letter ISO 3166 code, such as NG.');
      return { value: v.toUpperCase(), network: null };
    case 'client_ip': {
      const network = networkOf(v);
      if (!network) throw invalidParam('value', 'A client address is an IPv4 or IPv6 address, or a CIDR network such as 203.0.113.0/24.');
      return { value: network, network };
    }
  }
}

export async function createListItem(s: { sql: Sql }, o: Owner, input: CreateFraudListItem, by: FraudCaller): Promise<FraudListItemRow> {
  const { value, network } = normalise(input);
  return withTx(s, by.log, async (tx) => {
    let row: FraudListItemRow | undefined;
    try {
      row = await store.insertListItem(tx.sql, o, { id: newId('fli'), kind: input.kind, value, network, note: input.note ?? null });
    } catch (err) {
      // A network with host bits set (203.0.113.7/24): Postgres' cidr refuses it.
      if ((err as { code?: string }).code === '22P02') throw invalidParam('value', 'A network must have no bits set past its prefix, such as 203.0.113.0/24.');
      throw err;
    }
    if (!row) throw new ApiError('resource_conflict', `This ${input.kind} is already on the block list.`, 'value');
    await audit(tx.sql, o, by, 'fraud_list_item.created', { type: 'fraud_list_item', id: row.id }, { kind: row.kind, value: row.value });
    return row;
  });
}

export async function deleteListItem(s: { sql: Sql }, o: Owner, id: string, by: FraudCaller): Promise<void> {
  await withTx(s, by.log, async (tx) => {
    const row = await store.deleteListItem(tx.sql, o, id);
    if (!row) throw resourceMissing('fraud_list_item', id);
    await audit(tx.sql, o, by, 'fraud_list_item.deleted', { type: 'fraud_list_item', id }, { kind: row.kind, value: row.value });
  });
}

/**
 * The decision for one attempt on the hosted page, before the processor is called: the enabled
 * rules, the one block list entry that matches, and the velocity counts the rules need, each an
 * index lookup within the account and mode. Runs on the attempt's transaction (`sql`), before the
 * attempt is inserted, so the counts are of the earlier attempts.
 */
export async function assessPayment(sql: Db, o: Owner, facts: PaymentFacts): Promise<Decision | null> {
  const rules = await store.enabledRules(sql, o);
  const hit = (await store.listHit(sql, o, facts)) ?? null;
  const counts = new Map<string, number>();
  for (const need of velocityNeeds(rules)) {
    const value = need.attribute === 'card_attempts' ? facts.card_fingerprint : facts.client_ip;
    if (value === null) continue;
    counts.set(`${need.attribute}:${need.windowSeconds}`, await store.countAttempts(sql, o, need.attribute, value, need.windowSeconds));
  }
  return decide(facts, rules, hit, counts);
}

export const TRIAL_DAYS = 30;

export interface Trial {
  action: TryFraudRule['action'];
  description: string;
  matched: number;
  evaluated: number;
  truncated: boolean;
  since: Date;
  examples: string[];
}

/**
 * "Try a rule": the draft's conditions over the last 30 days of payments of the account and mode,
 * with each payment's velocity counted as the page would have counted it then. One indexed read,
 * bounded (store.TRIAL_LIMIT rows); the rest is evaluate.ts in memory.
 */
export async function tryRule(sql: Sql, o: Owner, draft: TryFraudRule, now = new Date()): Promise<Trial> {
  const since = new Date(now.getTime() - TRIAL_DAYS * 24 * 3600 * 1000);
  const rows = await store.trialRows(sql, o, since);
  const rule = { id: 'draft', name: 'draft', action: draft.action, conditions: normaliseConditions(draft.conditions), enabled: true };
  const counts = trialCounts(rows, velocityNeeds([rule]));
  const matched: string[] = [];
  rows.forEach((r, i) => {
    if (ruleMatches(rule, r, counts[i]!)) matched.push(r.id);
  });
  return {
    action: draft.action,
    description: describeRule(rule),
    matched: matched.length,
    evaluated: rows.length,
    truncated: rows.length >= store.TRIAL_LIMIT,
    since,
    examples: matched.slice(-10).reverse(),
  };
}
