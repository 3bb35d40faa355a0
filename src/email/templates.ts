import { formatAmount } from '../lib/currency.ts';
import { type BrandableEmail, cardText, dateText, dateTimeText, type EmailLineItem, type Fact, linesOf, oneLine, rendered } from './layout.ts';

/** A successful payment, as its receipt shows it. Never a card number: brand and last four only. */
export interface ReceiptEmailData {
  merchantName: string | null;
  paymentId: string;
  amountCents: number;
  currency: string;
  description: string | null;
  /** Null when the session had only an amount (the description, or "Payment", is the one line). */
  lineItems: EmailLineItem[] | null;
  paidAt: Date;
  card: { brand: string | null; last4: string } | null;
  /** The hosted receipt page; null for a payment made without a checkout session (a later installment). */
  receiptUrl: string | null;
  /** Set when the payment was for an invoice. */
  invoiceNumber: string | null;
}

export interface RefundNoticeEmailData {
  merchantName: string | null;
  refundId: string;
  paymentId: string;
  amountCents: number;
  /** What the payment was, and what of it is now refunded in all. */
  paymentAmountCents: number;
  totalRefundedCents: number;
  currency: string;
  refundedAt: Date;
  card: { brand: string | null; last4: string } | null;
  receiptUrl: string | null;
}

export interface InvoiceEmailData {
  merchantName: string | null;
  number: string;
  currency: string;
  lineItems: EmailLineItem[];
  totalCents: number;
  amountPaidCents: number;
  amountDueCents: number;
  description: string | null;
  dueDate: Date | null;
  /** The hosted invoice page (pay there, download the PDF). */
  url: string;
  pdfUrl: string;
}


export function receiptEmail(d: ReceiptEmailData): BrandableEmail {
  const amount = formatAmount(d.amountCents, d.currency);
  const card = cardText(d.card);
  const title = d.merchantName ? `Receipt from ${oneLine(d.merchantName)}` : 'Your receipt';
  const lines = d.lineItems?.length ? linesOf(d.lineItems) : [{ name: d.description ?? 'Payment', quantity: 1, total: d.amountCents }];
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount,
    intro: d.lineItems?.length && d.description ? d.description : null,
    facts: [
      { label: 'Amount paid', value: amount },
      { label: 'Date', value: dateTimeText(d.paidAt) },
      ...(card ? [{ label: 'Payment method', value: card }] : []),
      ...(d.invoiceNumber ? [{ label: 'Invoice', value: d.invoiceNumber }] : []),
      { label: 'Receipt number', value: d.paymentId },
    ],
    lines,
    currency: d.currency,
    totals: [{ label: 'Total', value: amount }],
    button: d.receiptUrl ? { label: 'View receipt', url: d.receiptUrl } : null,
    links: [],
    footer: `You received this email because you paid${d.merchantName ? ` ${oneLine(d.merchantName)}` : ''}. Keep it for your records.`,
  });
}

export function refundNoticeEmail(d: RefundNoticeEmailData): BrandableEmail {
  const amount = formatAmount(d.amountCents, d.currency);
  const card = cardText(d.card);
  const title = d.merchantName ? `Refund from ${oneLine(d.merchantName)}` : 'Your refund';
  const full = d.totalRefundedCents >= d.paymentAmountCents;
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount,
    intro: `${amount} was refunded${card ? ` to your ${card}` : ''}. It may take 5 to 10 business days to appear on your statement.`,
    facts: [
      { label: 'Amount refunded', value: amount },
      { label: 'Date', value: dateTimeText(d.refundedAt) },
      { label: 'Original payment', value: formatAmount(d.paymentAmountCents, d.currency) },
      { label: full ? 'Refunded in full' : 'Refunded so far', value: formatAmount(d.totalRefundedCents, d.currency) },
      ...(card ? [{ label: 'Payment method', value: card }] : []),
      { label: 'Refund number', value: d.refundId },
      { label: 'Payment', value: d.paymentId },
    ],
    lines: null,
    currency: d.currency,
    totals: [],
    button: d.receiptUrl ? { label: 'View receipt', url: d.receiptUrl } : null,
    links: [],
    footer: `You received this email because${d.merchantName ? ` ${oneLine(d.merchantName)}` : ' the merchant'} refunded a payment you made.`,
  });
}

function invoiceFacts(d: InvoiceEmailData): Fact[] {
  return [
    { label: 'Invoice number', value: d.number },
    ...(d.dueDate ? [{ label: 'Due date', value: dateText(d.dueDate) }] : []),
    { label: 'Amount due', value: formatAmount(d.amountDueCents, d.currency) },
  ];
}

function invoiceTotals(d: InvoiceEmailData): Fact[] {
  return [
    { label: 'Total', value: formatAmount(d.totalCents, d.currency) },
    ...(d.amountPaidCents > 0 ? [{ label: 'Paid', value: formatAmount(d.amountPaidCents, d.currency) }] : []),
    { label: 'Amount due', value: formatAmount(d.amountDueCents, d.currency) },
  ];
}

export function invoiceEmail(d: InvoiceEmailData): BrandableEmail {
  const title = d.merchantName ? `Invoice ${d.number} from ${oneLine(d.merchantName)}` : `Invoice ${d.number}`;
  const due = formatAmount(d.amountDueCents, d.currency);
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount: due,
    intro: d.description ?? (d.dueDate ? `Due ${dateText(d.dueDate)}.` : null),
    facts: invoiceFacts(d),
    lines: linesOf(d.lineItems),
    currency: d.currency,
    totals: invoiceTotals(d),
    button: { label: 'Pay this invoice', url: d.url },
    links: [{ label: 'Download the invoice (PDF)', url: d.pdfUrl }],
    footer: `You received this email because${d.merchantName ? ` ${oneLine(d.merchantName)}` : ' a merchant'} sent you an invoice.`,
  });
}

/** `reminder` counts from 1: the first reminder after the due date. */
export function invoiceReminderEmail(d: InvoiceEmailData & { reminder: number }): BrandableEmail {
  const subject = d.dueDate ? `Reminder: invoice ${d.number} is overdue` : `Reminder: invoice ${d.number} is due`;
  const from = d.merchantName ? ` from ${oneLine(d.merchantName)}` : '';
  const heading = `Reminder: invoice ${d.number}${from} is ${d.dueDate ? 'overdue' : 'due'}`;
  const due = formatAmount(d.amountDueCents, d.currency);
  return rendered(subject, {
    merchant: d.merchantName,
    heading,
    amount: due,
    intro: `${d.dueDate ? `This invoice was due on ${dateText(d.dueDate)}` : 'This invoice is due'} and ${due} remains to pay.${d.reminder > 1 ? ` This is reminder ${d.reminder}.` : ''}`,
    facts: invoiceFacts(d),
    lines: linesOf(d.lineItems),
    currency: d.currency,
    totals: invoiceTotals(d),
    button: { label: 'Pay this invoice', url: d.url },
    links: [{ label: 'Download the invoice (PDF)', url: d.pdfUrl }],
    footer: `You received this reminder because an invoice from${d.merchantName ? ` ${oneLine(d.merchantName)}` : ' a merchant'} is still open. If you have paid it already, please ignore this email.`,
  });
}
