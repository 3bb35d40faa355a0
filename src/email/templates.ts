import { logoUrlProblem } from '../auth/schema.ts';
import { formatAmount } from '../lib/currency.ts';
import { html, raw } from '../pages/html.ts';
import { textColorOn } from '../pages/layout.ts';

/** What every template renders: a subject and two parts, plain text and HTML (escaped). */
export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** The account's look in its emails (accounts.brand_color, logo_url): null for the defaults. */
export interface EmailBrand {
  /** `#rrggbb`: the colour of the email's button. */
  color: string | null;
  /** An https URL validated by the API: the logo above the email. */
  logoUrl: string | null;
}

/**
 * A rendered email that can be rendered again in the account's colour and logo: queueEmail
 * (outbox.ts) does so with the account's branding, so the callers that build the data need not
 * know about it. The text part is the same either way.
 */
export interface BrandableEmail extends RenderedEmail {
  withBrand(brand: EmailBrand): RenderedEmail;
}

/** One line of a receipt or an invoice. */
export interface EmailLineItem {
  name: string;
  quantity: number;
  /** Unit amount, in the smallest currency unit. */
  amount: number;
}

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

// ---------------------------------------------------------------------------------------------
// Rendering. Every value a merchant or payer typed goes through the `html` tag (escaped); the
// styles are inline (many mail clients drop <style>); links are absolute URLs given by the caller.

const FONT = 'font-family:-apple-system,BlinkMacSystemFont,Segoe UI,Helvetica,Arial,sans-serif';
const MUTED = 'color:#6b7280';
/** The button of an email without a brand colour, and its text. */
const BUTTON = '#111827';

/**
 * The brand as an email may show it: a colour only as `#rrggbb` (it goes into a style attribute),
 * a logo only as an https URL the API would accept (it goes into an src attribute and is fetched
 * by the reader's mail client). Anything else falls back to the default look.
 */
function safeBrand(b: EmailBrand | null | undefined): { color: string; text: string; logoUrl: string | null } {
  const color = b?.color && /^#[0-9a-f]{6}$/i.test(b.color) ? b.color.toLowerCase() : BUTTON;
  const logoUrl = b?.logoUrl && b.logoUrl.startsWith('https://') && logoUrlProblem(b.logoUrl) === null ? b.logoUrl : null;
  return { color, text: color === BUTTON ? '#ffffff' : textColorOn(color), logoUrl };
}

/** A subject is one header line: a name with a line break in it must not start a new header. */
const oneLine = (s: string): string => s.replace(/[\r\n\t\u2028\u2029]+/g, ' ').replace(/\s{2,}/g, ' ').trim();

const dateText = (d: Date): string => d.toLocaleString('en-US', { dateStyle: 'long', timeZone: 'UTC' });
const dateTimeText = (d: Date): string =>
  `${d.toLocaleString('en-US', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' })} UTC`;

const BRANDS: Record<string, string> = {
  visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club',
  jcb: 'JCB', unionpay: 'UnionPay', cartes_bancaires: 'Cartes Bancaires',
};
/** "Visa ending in 4242": the brand and last four only, never more of the number. */
function cardText(card: { brand: string | null; last4: string } | null): string | null {
  if (!card) return null;
  const brand = card.brand ? (BRANDS[card.brand.toLowerCase()] ?? card.brand.charAt(0).toUpperCase() + card.brand.slice(1)) : 'Card';
  return `${brand} ending in ${card.last4.slice(-4)}`;
}

interface Fact {
  label: string;
  value: string;
}

interface Line {
  name: string;
  quantity: number;
  /** The line's total (unit amount × quantity). */
  total: number;
}

interface Layout {
  /** The merchant's name (null: none is shown). */
  merchant: string | null;
  heading: string;
  /** The large figure under the heading (the amount paid, refunded or due). */
  amount: string | null;
  intro: string | null;
  facts: Fact[];
  lines: Line[] | null;
  currency: string;
  totals: Fact[];
  button: { label: string; url: string } | null;
  links: Array<{ label: string; url: string }>;
  footer: string;
}

function renderHtml(l: Layout, brand?: EmailBrand | null): string {
  const cell = 'padding:8px 0;border-bottom:1px solid #e5e7eb;vertical-align:top';
  const b = safeBrand(brand);
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${l.heading}</title></head>
<body style="margin:0;padding:0;background:#f3f4f6;${raw(FONT)}">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f3f4f6;padding:24px 0">
<tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;padding:32px;${raw(FONT)};color:#111827;font-size:15px;line-height:1.5">
${b.logoUrl ? html`<tr><td style="padding-bottom:16px"><img src="${b.logoUrl}" alt="${l.merchant ?? 'Logo'}" height="40" style="display:block;height:40px;max-width:200px;width:auto;border:0"></td></tr>` : ''}
${l.merchant ? html`<tr><td style="font-size:14px;font-weight:600;${raw(MUTED)};padding-bottom:8px">${l.merchant}</td></tr>` : ''}
<tr><td><h1 style="margin:0 0 8px;font-size:22px;font-weight:600;color:#111827">${l.heading}</h1></td></tr>
${l.amount ? html`<tr><td style="font-size:28px;font-weight:700;padding:8px 0">${l.amount}</td></tr>` : ''}
${l.intro ? html`<tr><td style="padding:8px 0">${l.intro}</td></tr>` : ''}
${l.facts.length ? html`<tr><td style="padding:8px 0"><table role="presentation" width="100%" cellpadding="0" cellspacing="0">
${l.facts.map((f) => html`<tr><td style="${raw(cell)};${raw(MUTED)};width:40%">${f.label}</td><td style="${raw(cell)}">${f.value}</td></tr>`)}
</table></td></tr>` : ''}
${l.lines?.length ? html`<tr><td style="padding:16px 0 8px"><table role="presentation" width="100%" cellpadding="0" cellspacing="0">
<tr><th align="left" style="${raw(cell)};${raw(MUTED)};font-weight:500">Item</th><th align="right" style="${raw(cell)};${raw(MUTED)};font-weight:500">Qty</th><th align="right" style="${raw(cell)};${raw(MUTED)};font-weight:500">Amount</th></tr>
${l.lines.map((i) => html`<tr><td style="${raw(cell)}">${i.name}</td><td align="right" style="${raw(cell)}">${i.quantity}</td><td align="right" style="${raw(cell)}">${formatAmount(i.total, l.currency)}</td></tr>`)}
${l.totals.map((t) => html`<tr><td colspan="2" style="padding:8px 0;font-weight:600">${t.label}</td><td align="right" style="padding:8px 0;font-weight:600">${t.value}</td></tr>`)}
</table></td></tr>` : ''}
${l.button ? html`<tr><td style="padding:24px 0 8px"><a href="${l.button.url}" style="display:inline-block;background:${b.color};color:${b.text};text-decoration:none;font-weight:600;padding:12px 20px;border-radius:6px">${l.button.label}</a></td></tr>` : ''}
${l.links.map((k) => html`<tr><td style="padding:4px 0"><a href="${k.url}" style="color:#2563eb">${k.label}</a></td></tr>`)}
<tr><td style="padding-top:24px;font-size:13px;${raw(MUTED)}">${l.footer}</td></tr>
</table>
</td></tr>
</table>
</body></html>
`;
  return body.toString();
}

function renderText(l: Layout): string {
  const out: string[] = [];
  if (l.merchant) out.push(l.merchant, '');
  out.push(l.heading, '');
  if (l.amount) out.push(l.amount, '');
  if (l.intro) out.push(l.intro, '');
  for (const f of l.facts) out.push(`${f.label}: ${f.value}`);
  if (l.facts.length) out.push('');
  if (l.lines?.length) {
    for (const i of l.lines) out.push(`${i.quantity} × ${i.name}: ${formatAmount(i.total, l.currency)}`);
    for (const t of l.totals) out.push(`${t.label}: ${t.value}`);
    out.push('');
  }
  if (l.button) out.push(`${l.button.label}: ${l.button.url}`);
  for (const k of l.links) out.push(`${k.label}: ${k.url}`);
  if (l.button || l.links.length) out.push('');
  out.push(l.footer);
  return `${out.join('\n')}\n`;
}

function rendered(subject: string, l: Layout): BrandableEmail {
  const text = renderText(l);
  const out = { subject: oneLine(subject), text };
  return { ...out, html: renderHtml(l), withBrand: (brand) => ({ ...out, html: renderHtml(l, brand) }) };
}

const linesOf = (items: readonly EmailLineItem[]): Line[] => items.map((i) => ({ name: i.name, quantity: i.quantity, total: i.amount * i.quantity }));

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

/** An invitation to the merchant dashboard (src/dashboard/users): the one-time link to choose a password. */
export interface InvitationEmailData {
  merchantName: string | null;
  /** Who sent the invitation (a user of the account). */
  inviterEmail: string;
  /** The one-time set-password link. */
  url: string;
  /** Until when the link works. */
  expiresAt: Date;
}

export function invitationEmail(d: InvitationEmailData): BrandableEmail {
  const where = d.merchantName ? `the ${oneLine(d.merchantName)} dashboard` : 'the payments dashboard';
  const title = `You are invited to ${where}`;
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount: null,
    intro: `${d.inviterEmail} invited you to sign in to ${where}. Choose a password to start: the link works once, until ${dateTimeText(d.expiresAt)}.`,
    facts: [],
    lines: null,
    currency: 'usd',
    totals: [],
    button: { label: 'Choose your password', url: d.url },
    links: [],
    footer: 'If you did not expect this invitation, ignore this email: nothing happens unless the link is used. Never forward it: whoever opens the link can choose the password.',
  });
}

/** One customer record an email's sign-in link is for (an email may belong to several records of one merchant). */
export interface PortalLinkChoice {
  /** The one-time sign-in link. */
  url: string;
  /** How the record is told apart when there are several ("Ada Lovelace, Analytical Engines Ltd"); null for one. */
  label: string | null;
}

/** The customer portal's sign-in email (src/portal): one-time links, one per customer record of the email. */
export interface PortalLinkEmailData {
  merchantName: string | null;
  links: readonly PortalLinkChoice[];
  /** Until when the links work. */
  expiresAt: Date;
  livemode: boolean;
}

export function portalLinkEmail(d: PortalLinkEmailData): BrandableEmail {
  const where = d.merchantName ? oneLine(d.merchantName) : 'the merchant';
  const title = `Sign in to your account with ${where}`;
  const [first, ...others] = d.links;
  const several = d.links.length > 1;
  return rendered(`${d.livemode ? '' : '[Test mode] '}${title}`, {
    merchant: d.merchantName,
    heading: title,
    amount: null,
    intro: several
      ? `Your email belongs to ${d.links.length} customer records with ${where}: choose the one to open. Each link works once, until ${dateTimeText(d.expiresAt)}.`
      : `Sign in to see your payments, invoices and installment plans with ${where}. The link works once, until ${dateTimeText(d.expiresAt)}.`,
    facts: [],
    lines: null,
    currency: 'usd',
    totals: [],
    button: first ? { label: several && first.label ? `Sign in as ${oneLine(first.label)}` : 'Sign in', url: first.url } : null,
    links: others.map((l) => ({ label: `Sign in as ${oneLine(l.label ?? 'another record')}`, url: l.url })),
    footer: `You received this email because someone asked to sign in to ${where} with this address${d.livemode ? '' : ' (test mode)'}. If it was not you, ignore it: nothing happens unless a link is used. Never forward it: whoever opens a link is signed in.`,
  });
}

/** A part of an installment plan was declined (issue 16): what failed, when it is tried again, and a link to replace the card. */
export interface InstallmentFailedEmailData {
  merchantName: string | null;
  description: string | null;
  /** The part: its number, of how many, and its amount. */
  number: number;
  count: number;
  amountCents: number;
  currency: string;
  /** The message the decline gave (never more of the card than brand and last four). */
  reason: string;
  card: { brand: string | null; last4: string } | null;
  /** When the card is charged again; null: this was the last try (the plan defaults instead: another email). */
  nextAttemptAt: Date;
  /** The customer's one-time sign-in link to the portal, where the card is replaced; null when none could be made. */
  portalUrl: string | null;
  portalLinkExpiresAt: Date | null;
}

export function installmentFailedEmail(d: InstallmentFailedEmailData): BrandableEmail {
  const amount = formatAmount(d.amountCents, d.currency);
  const card = cardText(d.card);
  const from = d.merchantName ? ` to ${oneLine(d.merchantName)}` : '';
  const title = `Payment ${d.number} of ${d.count}${from} failed`;
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount,
    intro:
      `We could not charge ${amount}${card ? ` to your ${card}` : ' to your card'} for payment ${d.number} of ${d.count}` +
      `${d.description ? ` (${d.description})` : ''}: ${d.reason} We will try again on ${dateTimeText(d.nextAttemptAt)}.` +
      (d.portalUrl ? ' To use another card, update it now: the payment is then tried again at once.' : ' To use another card, contact the merchant.'),
    facts: [
      { label: 'Payment', value: `${d.number} of ${d.count}` },
      { label: 'Amount', value: amount },
      ...(card ? [{ label: 'Card', value: card }] : []),
      { label: 'Next try', value: dateTimeText(d.nextAttemptAt) },
    ],
    lines: null,
    currency: d.currency,
    totals: [],
    button: d.portalUrl ? { label: 'Update your card', url: d.portalUrl } : null,
    links: [],
    footer:
      `You received this email because you pay${d.merchantName ? ` ${oneLine(d.merchantName)}` : ' a merchant'} in installments.` +
      (d.portalLinkExpiresAt ? ` The link signs you in once, until ${dateTimeText(d.portalLinkExpiresAt)}; never forward it.` : ''),
  });
}

/** An installment plan ended unpaid: a part's last retry failed (issue 16). */
export interface InstallmentDefaultedEmailData {
  merchantName: string | null;
  description: string | null;
  number: number;
  count: number;
  amountCents: number;
  currency: string;
  paidCents: number;
  totalCents: number;
  reason: string;
}

export function installmentDefaultedEmail(d: InstallmentDefaultedEmailData): BrandableEmail {
  const money = (n: number) => formatAmount(n, d.currency);
  const title = d.merchantName ? `Your payment plan with ${oneLine(d.merchantName)} has ended` : 'Your payment plan has ended';
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount: money(d.totalCents - d.paidCents),
    intro:
      `Payment ${d.number} of ${d.count} (${money(d.amountCents)}) could not be charged after several tries: ${d.reason} ` +
      `The plan${d.description ? ` for ${d.description}` : ''} has ended and no further payments will be taken from your card. ` +
      `${money(d.paidCents)} of ${money(d.totalCents)} was paid; please contact the merchant about the rest.`,
    facts: [
      { label: 'Paid', value: money(d.paidCents) },
      { label: 'Unpaid', value: money(d.totalCents - d.paidCents) },
      { label: 'Total', value: money(d.totalCents) },
    ],
    lines: null,
    currency: d.currency,
    totals: [],
    button: null,
    links: [],
    footer: `You received this email because you paid${d.merchantName ? ` ${oneLine(d.merchantName)}` : ' a merchant'} in installments.`,
  });
}
