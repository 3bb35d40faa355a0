import type { Condition, FraudAction, NumberOperator } from './schema.ts';

/**
 * Rule evaluation (docs/fraud.md), pure: what the hosted page, the "try a rule" trial and the unit
 * tests share. The facts of one attempt and its velocity counts in, a decision out.
 */

/** What the rules see of one attempt. A fact the processor did not give (a card's country) is null: no condition on it holds. */
export interface PaymentFacts {
  amount_cents: number;
  currency: string;
  email: string | null;
  card_fingerprint: string | null;
  card_country: string | null;
  client_ip: string | null;
}

export interface RuleDef {
  id: string;
  name: string;
  action: FraudAction;
  conditions: Condition[];
  enabled: boolean;
}

/** A block list entry that matched the attempt. */
export interface ListHit {
  id: string;
  kind: string;
}

export interface Decision {
  action: FraudAction;
  /** The rule (`frl_…`) or block list entry (`fli_…`) that decided. */
  ruleId: string;
  reason: string;
}

export type VelocityAttribute = 'card_attempts' | 'client_ip_attempts';

/** The key of one velocity count: its attribute and window. */
export const velocityKey = (attribute: VelocityAttribute, windowSeconds: number): string => `${attribute}:${windowSeconds}`;

/** Every velocity count the enabled rules need, once each. */
export function velocityNeeds(rules: readonly RuleDef[]): Array<{ attribute: VelocityAttribute; windowSeconds: number }> {
  const seen = new Map<string, { attribute: VelocityAttribute; windowSeconds: number }>();
  for (const r of rules) {
    if (!r.enabled) continue;
    for (const c of r.conditions) {
      if (c.attribute === 'card_attempts' || c.attribute === 'client_ip_attempts') {
        seen.set(velocityKey(c.attribute, c.window_seconds), { attribute: c.attribute, windowSeconds: c.window_seconds });
      }
    }
  }
  return [...seen.values()];
}

export const emailDomain = (email: string | null): string | null => {
  const at = email?.lastIndexOf('@') ?? -1;
  return email && at > 0 ? email.slice(at + 1).toLowerCase() : null;
};

function compare(op: NumberOperator, left: number, right: number): boolean {
  switch (op) {
    case 'gt':
      return left > right;
    case 'gte':
      return left >= right;
    case 'lt':
      return left < right;
    case 'lte':
      return left <= right;
    case 'eq':
      return left === right;
    case 'ne':
      return left !== right;
  }
}

const inSet = (op: 'in' | 'not_in', value: string | null, values: readonly string[]): boolean =>
  value !== null && (op === 'in' ? values.includes(value) : !values.includes(value));

/** Whether one condition holds. A velocity count not given (no card, no address) never holds. */
export function conditionHolds(c: Condition, f: PaymentFacts, counts: ReadonlyMap<string, number>): boolean {
  switch (c.attribute) {
    case 'amount_cents':
      return compare(c.operator, f.amount_cents, c.value);
    case 'currency':
      return inSet(c.operator, f.currency.toLowerCase(), c.values);
    case 'card_country':
      return inSet(c.operator, f.card_country?.toUpperCase() ?? null, c.values);
    case 'email_domain':
      return inSet(c.operator, emailDomain(f.email), c.values);
    case 'card_attempts':
    case 'client_ip_attempts': {
      if ((c.attribute === 'card_attempts' ? f.card_fingerprint : f.client_ip) === null) return false;
      const n = counts.get(velocityKey(c.attribute, c.window_seconds));
      return n !== undefined && compare(c.operator, n, c.value);
    }
  }
}

export const ruleMatches = (r: Pick<RuleDef, 'conditions'>, f: PaymentFacts, counts: ReadonlyMap<string, number>): boolean =>
  r.conditions.length > 0 && r.conditions.every((c) => conditionHolds(c, f, counts));

const OPS: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '=', ne: '!=', in: 'in', not_in: 'not in' };

/** One condition in words, for the reason recorded on a payment and the dashboard. */
export function describeCondition(c: Condition): string {
  switch (c.attribute) {
    case 'amount_cents':
      return `amount_cents ${OPS[c.operator]} ${c.value}`;
    case 'currency':
    case 'card_country':
    case 'email_domain':
      return `${c.attribute} ${OPS[c.operator]} [${c.values.join(', ')}]`;
    case 'card_attempts':
    case 'client_ip_attempts':
      return `${c.attribute} in ${c.window_seconds}s ${OPS[c.operator]} ${c.value}`;
  }
}

export const describeRule = (r: Pick<RuleDef, 'conditions'>): string => r.conditions.map(describeCondition).join(' and ');

const LIST_WORDS: Record<string, string> = {
  email: 'the email',
  card_fingerprint: 'the card',
  card_country: "the card's country",
  client_ip: "the client's address",
};

/**
 * The decision, in Stripe Radar's order: an `allow` rule that matches wins over everything (a
 * trusted customer is never blocked by a list or a velocity rule); then a block list entry or a
 * `block` rule; then a `review` rule. Among rules of one action the oldest (lowest id) decides.
 * Null: nothing matched, the payment goes ahead unmarked.
 */
export function decide(facts: PaymentFacts, rules: readonly RuleDef[], listHit: ListHit | null, counts: ReadonlyMap<string, number>): Decision | null {
  const active = [...rules].filter((r) => r.enabled).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const first = (action: FraudAction) => active.find((r) => r.action === action && ruleMatches(r, facts, counts));
  const ofRule = (r: RuleDef): Decision => ({ action: r.action, ruleId: r.id, reason: `Rule "${r.name}": ${describeRule(r)}` });
  const allowed = first('allow');
  if (allowed) return ofRule(allowed);
  if (listHit) return { action: 'block', ruleId: listHit.id, reason: `Block list: ${LIST_WORDS[listHit.kind] ?? listHit.kind} is listed` };
  const blocked = first('block');
  if (blocked) return ofRule(blocked);
  const reviewed = first('review');
  return reviewed ? ofRule(reviewed) : null;
}

/** One past payment for a trial: its facts and when it was made. */
export interface TrialRow extends PaymentFacts {
  id: string;
  created_at: Date;
}

/**
 * The velocity counts of each past payment, as the hosted page would have counted them then: the
 * earlier rows of the same card or address within each window. `rows` oldest first.
 */
export function trialCounts(rows: readonly TrialRow[], needs: ReturnType<typeof velocityNeeds>): Array<Map<string, number>> {
  const out = rows.map(() => new Map<string, number>());
  for (const need of needs) {
    const keyOf = (r: TrialRow) => (need.attribute === 'card_attempts' ? r.card_fingerprint : r.client_ip);
    const windowMs = need.windowSeconds * 1000;
    const seen = new Map<string, number[]>(); // per key: times, oldest first
    rows.forEach((r, i) => {
      const key = keyOf(r);
      if (key === null) return;
      const times = seen.get(key) ?? [];
      const t = r.created_at.getTime();
      while (times.length && times[0]! <= t - windowMs) times.shift();
      out[i]!.set(velocityKey(need.attribute, need.windowSeconds), times.length);
      times.push(t);
      seen.set(key, times);
    });
  }
  return out;
}
