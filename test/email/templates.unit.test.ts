import { describe, expect, it } from 'vitest';
import { invitationEmail } from '../../src/email/sign-in-templates.ts';
import { invoiceEmail, invoiceReminderEmail, receiptEmail, refundNoticeEmail, type InvoiceEmailData, type ReceiptEmailData } from '../../src/email/templates.ts';
import { contrastRatio } from '../../src/pages/layout.ts';
import { describeSmtpUrl, isPermanentSendError, scrubError } from '../../src/email/transport.ts';
import { DIGITS } from '../helpers/cards.ts';

const EVIL = 'Tea <script>alert(1)</script> "Room" & Co';

const receipt = (over: Partial<ReceiptEmailData> = {}): ReceiptEmailData => ({
  merchantName: 'Tea Room',
  paymentId: 'pay_0123456789',
  amountCents: 4900,
  currency: 'usd',
  description: 'Order #1042',
  lineItems: [
    { name: 'Loose-leaf green tea, 100 g', quantity: 2, amount: 850 },
    { name: 'Ceramic teapot', quantity: 1, amount: 3200 },
  ],
  paidAt: new Date('2026-03-05T14:03:00Z'),
  card: { brand: 'visa', last4: '4242' },
  receiptUrl: 'https://pay.example/checkout/cs_1/receipt',
  invoiceNumber: null,
  ...over,
});

const invoice = (over: Partial<InvoiceEmailData> = {}): InvoiceEmailData => ({
  merchantName: 'Tea Room',
  number: 'INV-0001',
  currency: 'eur',
  lineItems: [{ name: 'Tasting session', quantity: 3, amount: 2500 }],
  totalCents: 7500,
  amountPaidCents: 2500,
  amountDueCents: 5000,
  description: 'March tastings',
  dueDate: new Date('2026-04-01T00:00:00Z'),
  url: 'https://pay.example/invoices/tok_abc',
  pdfUrl: 'https://pay.example/invoices/tok_abc/pdf',
  ...over,
});

/** The text of the HTML part with its tags removed and the five entities read back. */
const visible = (h: string) =>
  h.replace(/<[^>]*>/g, ' ').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');

describe('receipt email', () => {
  it('when rendered, then subject, text and HTML name the merchant, the amount, each item, the date, brand and last four, and the receipt link', () => {
    const r = receiptEmail(receipt());
    expect(r.subject).toBe('Receipt from Tea Room');
    for (const part of [r.text, visible(r.html)]) {
      expect(part).toContain('Receipt from Tea Room');
      expect(part).toContain('$49.00');
      expect(part).toContain('Loose-leaf green tea, 100 g');
      expect(part).toContain('$17.00'); // 2 × $8.50
      expect(part).toContain('Ceramic teapot');
      expect(part).toContain('March 5, 2026');
      expect(part).toContain('Visa ending in 4242');
      expect(part).toContain('pay_0123456789');
    }
    expect(r.text).toContain('https://pay.example/checkout/cs_1/receipt');
    expect(r.html).toContain('href="https://pay.example/checkout/cs_1/receipt"');
    expect(r.html).toMatch(/^<!doctype html>/);
    expect(r.html).not.toContain('<style'); // inline styles only
  });

  it('when the business or an item name holds markup, then the HTML part escapes it and the subject stays one line', () => {
    const r = receiptEmail(receipt({ merchantName: `${EVIL}\r\nBcc: victim@example.com`, lineItems: [{ name: '<img src=x onerror=alert(1)>', quantity: 1, amount: 4900 }] }));
    expect(r.html).not.toContain('<script>');
    expect(r.html).not.toContain('<img');
    expect(r.html).toContain('Tea &lt;script&gt;alert(1)&lt;/script&gt; &quot;Room&quot; &amp; Co');
    expect(r.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(r.subject).not.toMatch(/[\r\n]/);
    expect(r.subject).toBe(`Receipt from ${EVIL} Bcc: victim@example.com`);
    expect(r.text).toContain(EVIL); // plain text is not HTML: shown as typed
  });

  it('when the account has no business name and the session no items, then the heading is "Your receipt" and the one line is the description', () => {
    const r = receiptEmail(receipt({ merchantName: null, lineItems: null, description: 'Gift card', card: null, currency: 'jpy', amountCents: 1999 }));
    expect(r.subject).toBe('Your receipt');
    expect(r.text).toContain('1 × Gift card: ¥1,999');
    expect(r.text).not.toContain('ending in');
    expect(r.text).not.toMatch(/\bnull\b|undefined/);
    expect(visible(r.html)).not.toMatch(/\bnull\b|undefined/);
  });

  it('when the payment paid an invoice, then its number is shown', () => {
    expect(receiptEmail(receipt({ invoiceNumber: 'INV-0042' })).text).toContain('Invoice: INV-0042');
  });

  it('when a card is given, then only its last four digits appear, never a longer run of digits', () => {
    const r = receiptEmail(receipt({ card: { brand: 'mastercard', last4: '4444' } }));
    expect(r.text).toContain('Mastercard ending in 4444');
    // Even handed more than four digits, the email shows the last four only.
    const longer = receiptEmail(receipt({ card: { brand: 'visa', last4: DIGITS.visa } }));
    for (const part of [r.subject, r.text, r.html, longer.text, longer.html]) expect(part).not.toMatch(/\d{12,19}/);
    expect(longer.text).toContain('Visa ending in 4242');
  });
});

describe('refund notice email', () => {
  it('when a part of a payment is refunded, then it says how much, to which card, the total refunded so far and links the receipt', () => {
    const r = refundNoticeEmail({
      merchantName: 'Tea Room', refundId: 're_1', paymentId: 'pay_1', amountCents: 1200, paymentAmountCents: 5000,
      totalRefundedCents: 1200, currency: 'usd', refundedAt: new Date('2026-03-06T10:00:00Z'), card: { brand: 'visa', last4: '4242' },
      receiptUrl: 'https://pay.example/checkout/cs_1/receipt',
    });
    expect(r.subject).toBe('Refund from Tea Room');
    for (const part of [r.text, visible(r.html)]) {
      expect(part).toContain('$12.00 was refunded to your Visa ending in 4242');
      expect(part).toContain('$50.00');
      expect(part).toContain('Refunded so far');
      expect(part).toContain('re_1');
    }
    expect(r.html).toContain('href="https://pay.example/checkout/cs_1/receipt"');
  });

  it('when the whole payment is refunded and no name is set, then it says "Refunded in full" under "Your refund"', () => {
    const r = refundNoticeEmail({
      merchantName: null, refundId: 're_2', paymentId: 'pay_2', amountCents: 500, paymentAmountCents: 500, totalRefundedCents: 500,
      currency: 'gbp', refundedAt: new Date(), card: null, receiptUrl: null,
    });
    expect(r.subject).toBe('Your refund');
    expect(r.text).toContain('Refunded in full: £5.00');
    expect(r.text).not.toContain('View receipt');
  });
});

describe('invoice emails', () => {
  it('when an invoice is sent, then the email names number and merchant, lists items, total, paid and due, and links the page and the PDF', () => {
    const r = invoiceEmail(invoice());
    expect(r.subject).toBe('Invoice INV-0001 from Tea Room');
    for (const part of [r.text, visible(r.html)]) {
      expect(part).toContain('Tasting session');
      expect(part).toContain('€75.00');
      expect(part).toContain('€25.00');
      expect(part).toContain('€50.00');
      expect(part).toContain('April 1, 2026');
      expect(part).toContain('March tastings');
    }
    expect(r.text).toContain('Pay this invoice: https://pay.example/invoices/tok_abc');
    expect(r.text).toContain('https://pay.example/invoices/tok_abc/pdf');
    expect(r.html).toContain('href="https://pay.example/invoices/tok_abc"');
    expect(r.html).toContain('href="https://pay.example/invoices/tok_abc/pdf"');
  });

  it('when a reminder is rendered, then the subject says the invoice is overdue and the body counts the reminder', () => {
    const r = invoiceReminderEmail({ ...invoice({ merchantName: EVIL }), reminder: 2 });
    expect(r.subject).toBe('Reminder: invoice INV-0001 is overdue');
    expect(r.text).toContain('This invoice was due on April 1, 2026 and €50.00 remains to pay. This is reminder 2.');
    expect(r.html).not.toContain('<script>');
    expect(invoiceEmail(invoice({ merchantName: null })).subject).toBe('Invoice INV-0001');
  });
});

describe("emails in the account's brand", () => {
  const LOGO = 'https://cdn.tea.example/logo.png?v=2&size=2x';
  const buttonStyle = (h: string) => /<a href="[^"]+" style="display:inline-block;background:(#[0-9a-f]{6});color:(#[0-9a-f]{6});/.exec(h);

  it('when an email is rendered with a brand, then the logo heads it and the button wears the brand colour with the text colour that contrasts more; the text part is unchanged', () => {
    for (const render of [() => receiptEmail(receipt()), () => invoiceEmail(invoice()), () => invoiceReminderEmail({ ...invoice(), reminder: 1 })]) {
      const plain = render();
      const branded = plain.withBrand({ color: '#FFD400', logoUrl: LOGO });
      expect(branded.html).toContain('<img src="https://cdn.tea.example/logo.png?v=2&amp;size=2x" alt="Tea Room" height="40" style="display:block;');
      expect(buttonStyle(branded.html)?.slice(1)).toEqual(['#ffd400', '#000000']);
      expect(branded.text).toBe(plain.text);
      expect(branded.subject).toBe(plain.subject);
      expect(branded.html).not.toContain('<style');
      // Without a brand: no logo, the dark default button with white text.
      expect(plain.html).not.toContain('<img');
      expect(buttonStyle(plain.html)?.slice(1)).toEqual(['#111827', '#ffffff']);
    }
    expect(buttonStyle(receiptEmail(receipt()).withBrand({ color: '#0b6b3a', logoUrl: null }).html)?.slice(1)).toEqual(['#0b6b3a', '#ffffff']);
  });

  it('when any brand colour is used, then the button text contrasts with it at least 4.5:1', () => {
    for (let i = 0; i < 4096; i++) {
      const color = `#${(i * 4099).toString(16).padStart(6, '0').slice(-6)}`;
      const [bg, fg] = buttonStyle(receiptEmail(receipt()).withBrand({ color, logoUrl: null }).html)!.slice(1) as [string, string];
      expect(bg).toBe(color);
      expect(contrastRatio(bg, fg)).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('when the brand holds something that is not a #rrggbb colour or an https logo the API accepts, then the email keeps the default look', () => {
    const bad = [
      { color: 'red;background-image:url(https://evil.example/x)', logoUrl: 'http://tea.example/logo.png' },
      { color: '#12345', logoUrl: 'javascript:alert(1)' },
      { color: '#123456"><script>', logoUrl: 'https://user:pw@tea.example/l.png' },
      { color: null, logoUrl: 'https://tea.example/a"onerror="alert(1).png' },
    ];
    for (const brand of bad) {
      const h = receiptEmail(receipt()).withBrand(brand).html;
      expect(h, JSON.stringify(brand)).not.toContain('<img');
      expect(h).not.toContain('evil.example');
      expect(h).not.toContain('<script');
      expect(buttonStyle(h)?.slice(1)).toEqual(['#111827', '#ffffff']);
    }
  });
});

describe('invitation email', () => {
  const data = { merchantName: 'Tea & Co', inviterEmail: 'owner@tea.example', url: 'https://pay.example/dashboard/set-password?token=abc', expiresAt: new Date('2026-03-06T10:00:00Z') };

  it('when rendered, then it names the business and the inviter, links the one-time page and says until when it works', () => {
    const r = invitationEmail(data);
    expect(r.subject).toBe('You are invited to the Tea & Co dashboard');
    for (const part of [r.text, visible(r.html)]) {
      expect(part).toContain('owner@tea.example invited you to sign in to the Tea & Co dashboard');
      expect(part).toContain('March 6, 2026');
      expect(part).toContain('ignore this email');
    }
    expect(r.text).toContain('Choose your password: https://pay.example/dashboard/set-password?token=abc');
    expect(r.html).toContain('href="https://pay.example/dashboard/set-password?token=abc"');
    expect(r.html).toContain('Tea &amp; Co');
    expect(invitationEmail({ ...data, merchantName: `${EVIL}\nBcc: x@example.com` }).subject).not.toMatch(/[\r\n]/);
    expect(invitationEmail({ ...data, merchantName: null }).subject).toBe('You are invited to the payments dashboard');
  });
});

describe('SMTP settings and errors', () => {
  const url = 'smtps://mailer%40tea.example:s3cr%3At%2Fpw@smtp.example.com:465';

  it('when an error message carries the SMTP URL or its password (raw or decoded), then the stored text has neither', () => {
    const msg = `connect failed for ${url}: login mailer@tea.example / s3cr:t/pw refused (s3cr%3At%2Fpw)\n  at line 2`;
    const out = scrubError(msg, url);
    expect(out).not.toContain('s3cr');
    expect(out).toContain('smtps://mailer@tea.example@smtp.example.com:465');
    expect(out).not.toMatch(/\n/);
    expect(scrubError('x'.repeat(2000), null)).toHaveLength(500);
    expect(describeSmtpUrl(url)).toBe('smtps://mailer@tea.example@smtp.example.com:465');
  });

  it('when the server refuses the recipient or the message with 5xx, then it is permanent; a 4xx, a refused login or a lost connection is retried', () => {
    expect(isPermanentSendError(Object.assign(new Error('rejected'), { code: 'EENVELOPE', responseCode: 550 }))).toBe(true);
    expect(isPermanentSendError(Object.assign(new Error('rejected'), { code: 'EMESSAGE', responseCode: 554 }))).toBe(true);
    expect(isPermanentSendError(Object.assign(new Error('later'), { code: 'EMESSAGE', responseCode: 451 }))).toBe(false);
    expect(isPermanentSendError(Object.assign(new Error('login'), { code: 'EAUTH', responseCode: 535 }))).toBe(false);
    expect(isPermanentSendError(Object.assign(new Error('gone'), { code: 'ECONNECTION' }))).toBe(false);
    expect(isPermanentSendError('nope')).toBe(false);
  });
});
