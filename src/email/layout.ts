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
export const oneLine = (s: string): string => s.replace(/[\r\n\t\u2028\u2029]+/g, ' ').replace(/\s{2,}/g, ' ').trim();

export const dateText = (d: Date): string => d.toLocaleString('en-US', { dateStyle: 'long', timeZone: 'UTC' });
export const dateTimeText = (d: Date): string =>
  `${d.toLocaleString('en-US', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' })} UTC`;

const BRANDS: Record<string, string> = {
  visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club',
  jcb: 'JCB', unionpay: 'UnionPay', cartes_bancaires: 'Cartes Bancaires',
};
/** "Visa ending in 4242": the brand and last four only, never more of the number. */
export function cardText(card: { brand: string | null; last4: string } | null): string | null {
  if (!card) return null;
  const brand = card.brand ? (BRANDS[card.brand.toLowerCase()] ?? card.brand.charAt(0).toUpperCase() + card.brand.slice(1)) : 'Card';
  return `${brand} ending in ${card.last4.slice(-4)}`;
}

export interface Fact {
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

export function rendered(subject: string, l: Layout): BrandableEmail {
  const text = renderText(l);
  const out = { subject: oneLine(subject), text };
  return { ...out, html: renderHtml(l), withBrand: (brand) => ({ ...out, html: renderHtml(l, brand) }) };
}

export const linesOf = (items: readonly EmailLineItem[]): Line[] => items.map((i) => ({ name: i.name, quantity: i.quantity, total: i.amount * i.quantity }));
