import { describe, expect, it } from 'vitest';
import { reminderJobId } from '../../src/invoices/jobs.ts';
import { invoiceEmailData } from '../../src/invoices/presenter.ts';
import { firstReminderAt, reminderAfter } from '../../src/invoices/reminders.ts';
import { formatInvoiceNumber, lineItemsTotal, newHostedToken, planUpdate } from '../../src/invoices/service.ts';
import type { InvoiceRow } from '../../src/invoices/store.ts';
import { ApiError } from '../../src/lib/errors.ts';

const DAY = 86_400_000;
const settings = { intervalMs: 3 * DAY, limit: 3 };
const sentAt = new Date('2030-01-10T12:00:00Z');

describe('firstReminderAt', () => {
  it('when the due date is after the send, then the first reminder is at the due date', () => {
    const due = new Date('2030-01-20T00:00:00Z');
    expect(firstReminderAt(sentAt, due, settings)).toEqual(due);
  });

  it('when the invoice is sent on or after its due date, then the first reminder is one interval after the send', () => {
    expect(firstReminderAt(sentAt, new Date('2030-01-01T00:00:00Z'), settings)).toEqual(new Date(sentAt.getTime() + 3 * DAY));
    expect(firstReminderAt(sentAt, sentAt, settings)).toEqual(new Date(sentAt.getTime() + 3 * DAY));
  });

  it('when there is no due date, or the limit is 0, then no reminder is planned', () => {
    expect(firstReminderAt(sentAt, null, settings)).toBeNull();
    expect(firstReminderAt(sentAt, new Date('2030-01-20T00:00:00Z'), { ...settings, limit: 0 })).toBeNull();
  });
});

describe('reminderAfter', () => {
  it('when fewer than the limit have gone, then the next is one interval after this one; after the last, none', () => {
    expect(reminderAfter(1, sentAt, settings)).toEqual(new Date(sentAt.getTime() + 3 * DAY));
    expect(reminderAfter(2, sentAt, settings)).toEqual(new Date(sentAt.getTime() + 3 * DAY));
    expect(reminderAfter(3, sentAt, settings)).toBeNull();
    expect(reminderAfter(1, sentAt, { ...settings, limit: 1 })).toBeNull();
  });
});

describe('reminderJobId', () => {
  it('when made, then it differs per reminder and has no colon (BullMQ refuses one in a custom id)', () => {
    const id = reminderJobId('in_01jabcdefgh0001234567890abcdef', 2);
    expect(id).toBe('reminder-in_01jabcdefgh0001234567890abcdef-2');
    expect(reminderJobId('in_x', 1)).not.toBe(reminderJobId('in_x', 2));
    // BullMQ refuses a custom id with one ':' (the reminders test enqueues real ones).
    expect(id).not.toContain(':');
  });
});

describe('numbers, totals and tokens', () => {
  it('when a number is formatted, then it has four digits at least, more when needed', () => {
    expect(formatInvoiceNumber(1)).toBe('INV-0001');
    expect(formatInvoiceNumber(42)).toBe('INV-0042');
    expect(formatInvoiceNumber(9999)).toBe('INV-9999');
    expect(formatInvoiceNumber(10000)).toBe('INV-10000');
  });

  it('when lines are added up, then quantity times unit amount; over the maximum one payment may charge is a 400 naming line_items', () => {
    expect(lineItemsTotal([])).toBe(0);
    expect(lineItemsTotal([{ name: 'a', quantity: 3, amount: 250 }, { name: 'b', quantity: 1, amount: 0 }])).toBe(750);
    expect(lineItemsTotal([{ name: 'a', quantity: 1, amount: 99_999_999 }])).toBe(99_999_999);
    const err = (() => {
      try {
        lineItemsTotal([{ name: 'a', quantity: 2, amount: 50_000_000 }]);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'parameter_invalid', param: 'line_items' });
  });

  it('when hosted tokens are made, then each is 24 random bytes in base64url, never the same twice', () => {
    const tokens = new Set(Array.from({ length: 1000 }, newHostedToken));
    expect(tokens.size).toBe(1000);
    for (const tk of tokens) expect(Buffer.from(tk, 'base64url')).toHaveLength(24);
    expect([...tokens].every((tk) => /^[A-Za-z0-9_-]{32}$/.test(tk))).toBe(true);
  });
});

const draft: InvoiceRow = {
  id: 'in_1', account_id: 'acct_1', livemode: false, customer_id: 'cus_1', number: null, status: 'DRAFT', currency: 'usd',
  line_items: [{ name: 'Tea', quantity: 2, amount: 500 }], total_cents: 1000, amount_paid_cents: 0, amount_due_cents: 1000,
  description: null, due_date: null, allow_partial_payments: true, minimum_payment_cents: 200, allow_installments: false, installment_options: null, hosted_token: 'tok',
  metadata: { a: '1' }, finalized_at: null, sent_at: null, paid_at: null, voided_at: null, marked_uncollectible_at: null,
  reminder_count: 0, last_reminder_at: null, next_reminder_at: null, created_at: new Date(), updated_at: new Date(),
};

describe('planUpdate', () => {
  it('when a PATCH names fields, then only those change, the total follows the lines and metadata merges', () => {
    expect(planUpdate(draft, {})).toEqual({});
    expect(planUpdate(draft, { line_items: [{ name: 'Pot', quantity: 1, amount: 3000 }], metadata: { a: null, b: '2' }, due_date: 1_900_000_000 })).toEqual({
      line_items: [{ name: 'Pot', quantity: 1, amount: 3000 }],
      total_cents: 3000,
      metadata: { b: '2' },
      due_date: new Date(1_900_000_000_000),
    });
  });

  it('when partial payments are turned off while a minimum stays, then 400 naming minimum_payment_cents; turning both off is fine', () => {
    expect(() => planUpdate(draft, { allow_partial_payments: false })).toThrow(expect.objectContaining({ param: 'minimum_payment_cents' }));
    expect(planUpdate(draft, { allow_partial_payments: false, minimum_payment_cents: null })).toEqual({ allow_partial_payments: false, minimum_payment_cents: null });
    expect(() => planUpdate({ ...draft, allow_partial_payments: false, minimum_payment_cents: null }, { minimum_payment_cents: 100 })).toThrow(
      expect.objectContaining({ param: 'minimum_payment_cents' }),
    );
  });
});

describe('invoiceEmailData', () => {
  it('when an invoice is put in an email, then the links are its hosted page and PDF under INVOICE_URL', () => {
    const d = invoiceEmailData({ ...draft, number: 'INV-0007', hosted_token: 'abc' }, 'Tea Room', 'https://pay.example/invoices');
    expect(d).toMatchObject({ merchantName: 'Tea Room', number: 'INV-0007', url: 'https://pay.example/invoices/abc', pdfUrl: 'https://pay.example/invoices/abc/pdf', amountDueCents: 1000 });
  });
});
