import { describe, expect, it } from 'vitest';
import { conditionHolds, decide, describeRule, trialCounts, velocityKey, velocityNeeds, type PaymentFacts, type RuleDef, type TrialRow } from '../../src/fraud/evaluate.ts';
import { Condition, normaliseConditions } from '../../src/fraud/schema.ts';
import { networkOf } from '../../src/fraud/service.ts';

const facts = (over: Partial<PaymentFacts> = {}): PaymentFacts => ({
  amount_cents: 5000,
  currency: 'usd',
  email: 'ada@example.com',
  card_fingerprint: 'fp_aaaaaaaaaaaaaaaaaaaaaaaa',
  card_country: 'US',
  client_ip: '203.0.113.7',
  ...over,
});

const rule = (id: string, action: RuleDef['action'], conditions: Condition[], enabled = true): RuleDef => ({ id, name: id, action, conditions, enabled });
const none = new Map<string, number>();

describe('fraud rule evaluation', () => {
  it('when an amount condition is compared with each operator, then it holds exactly as written', () => {
    const holds = (operator: 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne', value: number) => conditionHolds({ attribute: 'amount_cents', operator, value }, facts(), none);
    expect([holds('gt', 5000), holds('gte', 5000), holds('lt', 5001), holds('lte', 4999), holds('eq', 5000), holds('ne', 5000)]).toEqual([false, true, true, false, true, false]);
  });

  it('when set conditions meet a payment, then currency, country and email domain compare case-insensitively and an unknown fact never holds', () => {
    const [cur, country, domain] = normaliseConditions([
      { attribute: 'currency', operator: 'in', values: ['USD'] },
      { attribute: 'card_country', operator: 'not_in', values: ['us', 'ca'] },
      { attribute: 'email_domain', operator: 'in', values: ['Example.COM'] },
    ]);
    expect(conditionHolds(cur!, facts(), none)).toBe(true);
    expect(conditionHolds(country!, facts(), none)).toBe(false);
    expect(conditionHolds(country!, facts({ card_country: 'ng' }), none)).toBe(true);
    expect(conditionHolds(country!, facts({ card_country: null }), none)).toBe(false);
    expect(conditionHolds(domain!, facts({ email: 'ADA@EXAMPLE.COM' }), none)).toBe(true);
    expect(conditionHolds(domain!, facts({ email: null }), none)).toBe(false);
  });

  it('when a velocity condition is evaluated, then it reads the count of its own attribute and window, and holds for nothing without a card or address', () => {
    const c: Condition = { attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 3 };
    expect(conditionHolds(c, facts(), new Map([[velocityKey('client_ip_attempts', 600), 3]]))).toBe(true);
    expect(conditionHolds(c, facts(), new Map([[velocityKey('client_ip_attempts', 60), 9]]))).toBe(false);
    expect(conditionHolds(c, facts({ client_ip: null }), new Map([[velocityKey('client_ip_attempts', 600), 9]]))).toBe(false);
    const needs = velocityNeeds([rule('frl_1', 'block', [c, c]), rule('frl_2', 'review', [{ attribute: 'card_attempts', window_seconds: 60, operator: 'gt', value: 1 }]), rule('frl_3', 'block', [c], false)]);
    expect(needs).toEqual([{ attribute: 'client_ip_attempts', windowSeconds: 600 }, { attribute: 'card_attempts', windowSeconds: 60 }]);
  });

  it('when several rules and a block list entry match, then allow wins over block, block over review, and the oldest rule of an action decides', () => {
    const big: Condition = { attribute: 'amount_cents', operator: 'gte', value: 1000 };
    const review = rule('frl_1', 'review', [big]);
    const blockNew = rule('frl_3', 'block', [big]);
    const blockOld = rule('frl_2', 'block', [big]);
    const allow = rule('frl_4', 'allow', [{ attribute: 'email_domain', operator: 'in', values: ['example.com'] }]);
    expect(decide(facts(), [review], null, none)).toMatchObject({ action: 'review', ruleId: 'frl_1' });
    expect(decide(facts(), [review, blockNew, blockOld], null, none)).toMatchObject({ action: 'block', ruleId: 'frl_2' });
    expect(decide(facts(), [review], { id: 'fli_1', kind: 'email' }, none)).toEqual({ action: 'block', ruleId: 'fli_1', reason: 'Block list: the email is listed' });
    expect(decide(facts(), [review, blockOld, allow], { id: 'fli_1', kind: 'email' }, none)).toMatchObject({ action: 'allow', ruleId: 'frl_4' });
    expect(decide(facts({ amount_cents: 10 }), [review, blockOld], null, none)).toBeNull();
    expect(decide(facts(), [rule('frl_5', 'block', [big], false)], null, none)).toBeNull();
  });

  it('when a rule decides, then its reason names the rule and its conditions in words', () => {
    const r = rule('frl_1', 'block', [{ attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 5 }, { attribute: 'card_country', operator: 'in', values: ['NG', 'GH'] }]);
    r.name = 'Card testing';
    expect(describeRule(r)).toBe('client_ip_attempts in 600s >= 5 and card_country in [NG, GH]');
    expect(decide(facts({ card_country: 'NG' }), [r], null, new Map([[velocityKey('client_ip_attempts', 600), 7]]))?.reason).toBe(
      'Rule "Card testing": client_ip_attempts in 600s >= 5 and card_country in [NG, GH]',
    );
  });

  it('when past payments are counted for a trial, then each sees only the earlier ones of its card or address within the window', () => {
    const at = (id: string, s: number, over: Partial<PaymentFacts> = {}): TrialRow => ({ ...facts(over), id, created_at: new Date(s * 1000) });
    const rows = [at('a', 0), at('b', 100), at('c', 200, { client_ip: '198.51.100.1' }), at('d', 650), at('e', 700, { client_ip: null })];
    const counts = trialCounts(rows, [{ attribute: 'client_ip_attempts', windowSeconds: 600 }]);
    expect(counts.map((m) => m.get('client_ip_attempts:600'))).toEqual([0, 1, 0, 1, undefined]);
  });

  it('when block list addresses are written, then networkOf gives their CIDR form or refuses them', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.7/32');
    expect(networkOf('203.0.113.0/24')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8::/64')).toBe('2001:db8::/64');
    expect([networkOf('203.0.113.0/33'), networkOf('example.com'), networkOf('1.2.3.4/24/1'), networkOf('')]).toEqual([null, null, null, null]);
  });

  it('when a condition names an unknown attribute or a window out of range, then the schema refuses it', () => {
    expect(Condition.safeParse({ attribute: 'ip_reputation', operator: 'gt', value: 1 }).success).toBe(false);
    expect(Condition.safeParse({ attribute: 'card_attempts', window_seconds: 5, operator: 'gt', value: 1 }).success).toBe(false);
    expect(Condition.safeParse({ attribute: 'card_country', operator: 'in', values: ['USA'] }).success).toBe(false);
    expect(Condition.safeParse({ attribute: 'amount_cents', operator: 'in', value: 1 }).success).toBe(false);
  });
});
