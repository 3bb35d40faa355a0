import { describe, expect, it } from 'vitest';
import type { InvoiceRow } from '../../src/invoices/store.ts';
import { parsePayAmount, payableRange, toMajorUnits } from '../../src/invoices/views.ts';

const invoice = (over: Partial<InvoiceRow> = {}) =>
  ({ currency: 'usd', total_cents: 10_000, amount_paid_cents: 0, amount_due_cents: 10_000, allow_partial_payments: true, minimum_payment_cents: null, ...over }) as InvoiceRow;

describe('the amount typed on the invoice page', () => {
  it.each([
    ['40', 4000],
    ['40.5', 4050],
    ['40.05', 4005],
    [' 40.00 ', 4000],
    ['$40.00', 4000],
    ['.50', 50],
    ['100', 10_000],
    ['0.01', 1],
    ['40.', 4000],
  ])('when "%s" is typed in usd, then it is %i cents exactly', (typed, cents) => {
    expect(parsePayAmount(typed, invoice())).toEqual({ amount: cents });
  });

  it('when an amount has thousands separators, then they are read as such', () => {
    expect(parsePayAmount('1,250.00', invoice({ total_cents: 200_000, amount_due_cents: 200_000 }))).toEqual({ amount: 125_000 });
  });

  it.each([
    ['', /Enter the amount to pay, between \$0\.01 and \$100\.00/],
    ['abc', /as a number, like 100\.00/],
    ['-5', /as a number/],
    ['1e3', /as a number/],
    ['4,0', /as a number/],
    ['40.001', /at most 2 decimals in USD/],
    ['0', /more than zero/],
    ['0.00', /more than zero/],
    ['100.01', /cannot be more than the amount due, \$100\.00/],
    ['99999999999999999999999999', /cannot be more than the amount due/],
  ])('when "%s" is typed, then the answer names the amount to pay: %s', (typed, message) => {
    const answer = parsePayAmount(typed, invoice());
    expect(answer).toHaveProperty('error');
    expect((answer as { error: string }).error).toMatch(message);
    expect((answer as { error: string }).error).toMatch(/amount to pay/i);
  });

  it('when a minimum payment is set, then less is refused unless it is the whole amount due', () => {
    const inv = invoice({ minimum_payment_cents: 2000, amount_paid_cents: 8500, amount_due_cents: 1500 });
    expect(payableRange(inv)).toEqual({ min: 1500, max: 1500 });
    expect(parsePayAmount('15.00', inv)).toEqual({ amount: 1500 });
    const big = invoice({ minimum_payment_cents: 2000 });
    expect((parsePayAmount('19.99', big) as { error: string }).error).toMatch(/at least \$20\.00 \(the minimum payment\)/);
    expect(parsePayAmount('20', big)).toEqual({ amount: 2000 });
  });

  it('when the currency has no decimals or three, then the decimals follow it', () => {
    const jpy = invoice({ currency: 'jpy', total_cents: 5000, amount_due_cents: 5000 });
    expect(parsePayAmount('1500', jpy)).toEqual({ amount: 1500 });
    expect((parsePayAmount('1500.5', jpy) as { error: string }).error).toMatch(/cannot have decimals in JPY/);
    const kwd = invoice({ currency: 'kwd', total_cents: 5000, amount_due_cents: 5000 });
    expect(parsePayAmount('1.234', kwd)).toEqual({ amount: 1234 });
    expect(toMajorUnits(5000, 'kwd')).toBe('5.000');
    expect(toMajorUnits(5, 'usd')).toBe('0.05');
    expect(toMajorUnits(5000, 'jpy')).toBe('5000');
  });
});
