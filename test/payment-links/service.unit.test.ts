import { describe, expect, it } from 'vitest';
import { closedReason, planUpdate } from '../../src/payment-links/service.ts';
import type { PaymentLinkRow } from '../../src/payment-links/store.ts';

// The PATCH planner and the closed reasons are pure: a row and a patch in, changes or an error out.
const NOW = Date.UTC(2030, 0, 15, 12);
const inAnHour = new Date(NOW + 3600_000);
const anHourAgo = new Date(NOW - 3600_000);

const row = (over: Partial<PaymentLinkRow> = {}): PaymentLinkRow => ({
  id: 'pl_00000000000000000000000000',
  account_id: 'acct_00000000000000000000000000',
  livemode: false,
  type: 'MULTI',
  status: 'ACTIVE',
  name: 'Concert ticket',
  slug: null,
  amount_cents: 2500,
  currency: 'usd',
  description: null,
  customer_id: null,
  collect_name: false,
  collect_email: false,
  collect_phone: false,
  installment_enabled: false,
  installment_options: null,
  quantity_limit: null,
  view_count: 0,
  payment_count: 0,
  total_collected_cents: 0,
  expires_at: null,
  metadata: {},
  created_at: new Date(NOW - 86_400_000),
  updated_at: new Date(NOW - 86_400_000),
  path: 'pl_00000000000000000000000000',
  ...over,
});

const none = { succeeded: 0, taken: 0 };
const paid = (succeeded: number, inFlight = 0) => ({ succeeded, taken: succeeded + inFlight });

describe('planUpdate (PATCH /v1/payment-links/:id)', () => {
  it('when fields are sent with their current values, then nothing changes', () => {
    const cur = row({ name: 'A', amount_cents: 100, collect_email: true, quantity_limit: 5 });
    expect(planUpdate(cur, { name: 'A', amount: 100, currency: 'usd', collect_email: true, quantity_limit: 5, type: 'MULTI', status: 'ACTIVE' }, none, NOW)).toEqual({});
  });

  it('when amount, currency and type change before any payment, then they are planned under their column names', () => {
    expect(planUpdate(row(), { amount: 900, currency: 'eur', type: 'SINGLE' }, none, NOW)).toEqual({ amount_cents: 900, currency: 'eur', type: 'SINGLE' });
  });

  it.each([
    ['amount', { amount: 900 }],
    ['currency', { currency: 'eur' }],
    ['type', { type: 'SINGLE' as const }],
  ])('when %s changes after a successful payment, then it is a 400 naming it', (param, patch) => {
    expect(() => planUpdate(row(), patch, paid(1), NOW)).toThrow(expect.objectContaining({ code: 'parameter_invalid', param }));
  });

  it('when metadata is sent, then it is merged into the stored pairs ("" removes a key, null clears all)', () => {
    const cur = row({ metadata: { a: '1', b: '2' } });
    expect(planUpdate(cur, { metadata: { b: '', c: '3' } }, none, NOW)).toEqual({ metadata: { a: '1', c: '3' } });
    expect(planUpdate(cur, { metadata: null }, none, NOW)).toEqual({ metadata: {} });
  });

  it('when a SINGLE link is given a quantity_limit other than 1, then it is a 400 on quantity_limit', () => {
    expect(() => planUpdate(row({ type: 'SINGLE' }), { quantity_limit: 2 }, none, NOW)).toThrow(expect.objectContaining({ param: 'quantity_limit' }));
    expect(() => planUpdate(row({ quantity_limit: 3 }), { type: 'SINGLE' }, none, NOW)).toThrow(expect.objectContaining({ param: 'quantity_limit' }));
    expect(planUpdate(row({ quantity_limit: 3 }), { type: 'SINGLE', quantity_limit: null }, none, NOW)).toEqual({ type: 'SINGLE', quantity_limit: null });
  });

  it('when quantity_limit goes below the payments plus the attempts in flight, then it is a 400 that counts both', () => {
    const cur = row({ quantity_limit: 10 });
    expect(() => planUpdate(cur, { quantity_limit: 3 }, paid(2, 2), NOW)).toThrow(
      expect.objectContaining({ param: 'quantity_limit', message: expect.stringContaining('2 successful payments and 2 in progress') }),
    );
    expect(() => planUpdate(cur, { quantity_limit: 1 }, paid(2), NOW)).toThrow(
      expect.objectContaining({ param: 'quantity_limit', message: expect.not.stringContaining('in progress') }),
    );
    expect(planUpdate(cur, { quantity_limit: 4 }, paid(2, 2), NOW)).toEqual({ quantity_limit: 4 });
  });

  it('when quantity_limit is lowered to the number already paid, then the link is planned COMPLETED', () => {
    expect(planUpdate(row({ quantity_limit: 10 }), { quantity_limit: 2 }, paid(2), NOW)).toEqual({ quantity_limit: 2, status: 'COMPLETED' });
  });

  it('when the link has ended (completed, expired or at its limit), then quantity_limit, expires_at and status are 400 resource_invalid_state', () => {
    const ended = [row({ status: 'COMPLETED' }), row({ expires_at: anHourAgo }), row({ quantity_limit: 2 })];
    for (const cur of ended) {
      const p = paid(cur.quantity_limit ?? 0);
      expect(() => planUpdate(cur, { quantity_limit: 50 }, p, NOW)).toThrow(expect.objectContaining({ code: 'resource_invalid_state' }));
      expect(() => planUpdate(cur, { expires_at: NOW / 1000 + 7200 }, p, NOW)).toThrow(expect.objectContaining({ code: 'resource_invalid_state' }));
    }
    expect(() => planUpdate(row({ status: 'COMPLETED' }), { status: 'CANCELLED' }, paid(1), NOW)).toThrow(expect.objectContaining({ code: 'resource_invalid_state' }));
    expect(() => planUpdate(row({ status: 'CANCELLED', expires_at: anHourAgo }), { status: 'ACTIVE' }, none, NOW)).toThrow(
      expect.objectContaining({ code: 'resource_invalid_state' }),
    );
    // Deactivating an expired link is still allowed: it only closes it further.
    expect(planUpdate(row({ expires_at: anHourAgo }), { status: 'CANCELLED' }, none, NOW)).toEqual({ status: 'CANCELLED' });
  });

  it('when expires_at is set, cleared or set in the past, then it is a Date, null, or a 400 on expires_at', () => {
    const at = Math.floor(Date.now() / 1000) + 3600;
    expect(planUpdate(row(), { expires_at: at }, none, NOW)).toEqual({ expires_at: new Date(at * 1000) });
    expect(planUpdate(row({ expires_at: inAnHour }), { expires_at: null }, none, NOW)).toEqual({ expires_at: null });
    expect(planUpdate(row({ expires_at: inAnHour }), { expires_at: inAnHour.getTime() / 1000 }, none, NOW)).toEqual({});
    expect(() => planUpdate(row(), { expires_at: Math.floor(Date.now() / 1000) - 60 }, none, NOW)).toThrow(expect.objectContaining({ param: 'expires_at' }));
  });
});

describe('closedReason (the public link page)', () => {
  it('when the link is open, then there is no reason', () => {
    expect(closedReason(row({ expires_at: inAnHour, quantity_limit: 3 }), 2, NOW)).toBeNull();
  });

  it.each([
    ['deactivated', row({ status: 'CANCELLED' }), 0, 'Deactivated'],
    ['completed', row({ status: 'COMPLETED' }), 0, 'Ended'],
    ['a MULTI link at its quantity_limit', row({ quantity_limit: 3 }), 3, 'Ended'],
    ['a SINGLE link paid once', row({ type: 'SINGLE' }), 1, 'Ended'],
    ['past expires_at', row({ expires_at: anHourAgo }), 0, 'Expired'],
    ['at expires_at to the millisecond', row({ expires_at: new Date(NOW) }), 0, 'Expired'],
    ['deactivated and expired (deactivation wins)', row({ status: 'CANCELLED', expires_at: anHourAgo }), 0, 'Deactivated'],
    ['at its limit and expired (ended wins)', row({ quantity_limit: 1, expires_at: anHourAgo }), 1, 'Ended'],
  ])('when the link is %s, then the payer is told why', (_label, link, succeeded, badge) => {
    const reason = closedReason(link, succeeded, NOW);
    expect(reason?.badge).toBe(badge);
    expect(reason?.message).toMatch(/^This payment link has (been deactivated|ended|expired)/);
  });
});
