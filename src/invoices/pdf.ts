import { formatAmount, minorUnits } from '../lib/currency.ts';
import type { InvoiceRow } from './store.ts';
import { formatDate, invoiceTitle, statusLabel } from './views.ts';

/** Who the invoice is for, as the PDF prints it: never the customer's notes or metadata. */
export interface BillTo {
  name: string | null;
  company: string | null;
  email: string | null;
}

export interface InvoicePdfData {
  inv: InvoiceRow;
  merchant: string | null;
  billTo: BillTo | null;
  /** The hosted invoice page, printed as "Pay online" while something is due. */
  url: string | null;
}

/**
 * The code points Helvetica (one of the 14 standard PDF fonts, so no font file ships) can draw:
 * pdfkit encodes it as WinAnsi, printable ASCII, Latin-1 and these 27 others.
 */
const WIN_ANSI_EXTRA = new Set([
  0x152, 0x153, 0x160, 0x161, 0x178, 0x17d, 0x17e, 0x192, 0x2c6, 0x2dc, 0x2013, 0x2014, 0x2018, 0x2019, 0x201a, 0x201c, 0x201d, 0x201e,
  0x2020, 0x2021, 0x2022, 0x2026, 0x2030, 0x2039, 0x203a, 0x20ac, 0x2122,
]);
const drawable = (cp: number) => (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || WIN_ANSI_EXTRA.has(cp);

/** Look-alikes for common characters outside WinAnsi. */
const SUBSTITUTES: Record<string, string> = {
  '\u2212': '-', '\u2010': '-', '\u2011': '-', '\u2015': '-', '\u2032': "'", '\u2033': '"', '\u2044': '/',
  '\u00a0': ' ', '\u2007': ' ', '\u2009': ' ', '\u202f': ' ', '\u200a': ' ', '\u2002': ' ', '\u2003': ' ',
  '\u0141': 'L', '\u0142': 'l', '\u0110': 'D', '\u0111': 'd', '\u0131': 'i', '\u2264': '<=', '\u2265': '>=', '\u2260': '!=',
  '\u2192': '->', '\u2190': '<-', '\u00d7': 'x',
};

/**
 * Text Helvetica can draw: each character outside WinAnsi becomes a look-alike (é stays, ő becomes
 * o, − becomes -), or "?" when there is none (CJK, emoji); controls become spaces. Never throws.
 */
export function pdfSafe(text: string): string {
  let out = '';
  for (const ch of text.toWellFormed()) {
    const cp = ch.codePointAt(0)!;
    if (drawable(cp)) {
      out += ch;
      continue;
    }
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      out += ' ';
      continue;
    }
    const sub = SUBSTITUTES[ch];
    if (sub !== undefined) {
      out += sub;
      continue;
    }
    // A letter with marks: the base letter when that is drawable (ő, ą, ș).
    const base = ch.normalize('NFKD').replace(/\p{M}/gu, '');
    out += base && [...base].every((c) => drawable(c.codePointAt(0)!)) ? base : cp >= 0xfe00 && cp <= 0xfe0f ? '' : '?';
  }
  return out;
}

const codeFormatters = new Map<string, Intl.NumberFormat>();

/** An amount as the PDF prints it: "$40.00", or "INR 1,000.00" when the symbol is not drawable. */
export function pdfAmount(cents: number, currency: string): string {
  const shown = formatAmount(cents, currency);
  if ([...shown].every((c) => drawable(c.codePointAt(0)!))) return shown;
  let f = codeFormatters.get(currency);
  if (!f) {
    const digits = minorUnits(currency);
    f = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase(), currencyDisplay: 'code', minimumFractionDigits: digits, maximumFractionDigits: digits });
    codeFormatters.set(currency, f);
  }
  return pdfSafe(f.format(cents / 10 ** minorUnits(currency)));
}

/** The file name of the download: the invoice number, reduced to characters safe in a header. */
export const pdfFileName = (inv: InvoiceRow): string => `${(inv.number ?? inv.id).replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`;

const INK = '#1a1f36';
const MUTED = '#5b6478';
const RULE = '#e6e8ee';

/** The invoice as a PDF (pdfkit, built-in Helvetica): the merchant, number, status, dates, bill-to, items and amounts. */
export async function invoicePdf(d: InvoicePdfData): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit'); // loaded with the first PDF: not at start
  const { inv } = d;
  const t = pdfSafe;
  const money = (n: number) => pdfAmount(n, inv.currency);
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: t(invoiceTitle(inv)), Author: t(d.merchant ?? ''), Subject: t(inv.description ?? '') },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const bottom = () => doc.page.height - doc.page.margins.bottom;

  // Heading: the merchant and the invoice; the state and dates on the right.
  const top = doc.y;
  doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text(t(d.merchant ?? 'Invoice'), left, top, { width: width * 0.6 });
  doc.font('Helvetica').fontSize(12).fillColor(MUTED).text(t(invoiceTitle(inv)), { width: width * 0.6 });
  const afterLeft = doc.y;
  const facts: Array<[string, string]> = [['Status', statusLabel(inv)]];
  const issued = inv.finalized_at ?? inv.sent_at;
  if (issued) facts.push(['Issued', formatDate(issued)]);
  if (inv.due_date) facts.push(['Due', formatDate(inv.due_date)]);
  if (inv.status === 'PAID' && inv.paid_at) facts.push(['Paid', formatDate(inv.paid_at)]);
  if (inv.status === 'VOID' && inv.voided_at) facts.push(['Voided', formatDate(inv.voided_at)]);
  if (!inv.livemode) facts.push(['Mode', 'Test mode']);
  doc.y = top;
  doc.fontSize(10);
  for (const [k, v] of facts) {
    const y = doc.y;
    doc.font('Helvetica').fillColor(MUTED).text(k, left + width * 0.6, y, { width: width * 0.15 });
    doc.font('Helvetica-Bold').fillColor(INK).text(t(v), left + width * 0.75, y, { width: width * 0.25, align: 'right' });
  }
  doc.y = Math.max(doc.y, afterLeft) + 20;

  // Bill to.
  if (d.billTo) {
    doc.font('Helvetica-Bold').fontSize(9).fillColor(MUTED).text('BILL TO', left, doc.y, { characterSpacing: 0.5 });
    doc.font('Helvetica').fontSize(11).fillColor(INK);
    for (const line of [d.billTo.name, d.billTo.company, d.billTo.email]) if (line) doc.text(t(line), { width });
    doc.moveDown(1);
  }
  if (inv.description) {
    doc.font('Helvetica').fontSize(11).fillColor(INK).text(t(inv.description), left, doc.y, { width });
    doc.moveDown(1);
  }

  // Items.
  const cols = [
    { label: 'Item', x: left, w: width * 0.46, align: 'left' as const },
    { label: 'Qty', x: left + width * 0.46, w: width * 0.1, align: 'right' as const },
    { label: 'Unit', x: left + width * 0.56, w: width * 0.2, align: 'right' as const },
    { label: 'Amount', x: left + width * 0.76, w: width * 0.24, align: 'right' as const },
  ];
  const rule = (y: number) => doc.moveTo(left, y).lineTo(left + width, y).lineWidth(0.75).strokeColor(RULE).stroke();
  const row = (cells: string[], font: string, color: string) => {
    doc.font(font).fontSize(10);
    const heights = cells.map((c, i) => doc.heightOfString(c, { width: cols[i]!.w - (i ? 0 : 8) }));
    const h = Math.max(...heights);
    if (doc.y + h + 12 > bottom()) {
      doc.addPage();
      doc.y = doc.page.margins.top;
    }
    const y = doc.y;
    cells.forEach((c, i) => doc.font(font).fillColor(color).text(c, cols[i]!.x, y, { width: cols[i]!.w - (i ? 0 : 8), align: cols[i]!.align }));
    doc.y = y + h + 6;
    rule(doc.y - 3);
  };
  row(cols.map((c) => c.label.toUpperCase()), 'Helvetica-Bold', MUTED);
  for (const item of inv.line_items) {
    row([t(item.name), String(item.quantity), money(item.amount), money(item.amount * item.quantity)], 'Helvetica', INK);
  }

  // Totals.
  doc.moveDown(0.5);
  const total = (label: string, value: string, bold = false) => {
    if (doc.y + 20 > bottom()) {
      doc.addPage();
      doc.y = doc.page.margins.top;
    }
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(bold ? 12 : 10).fillColor(INK);
    doc.text(label, left + width * 0.5, y, { width: width * 0.26 });
    doc.text(value, left + width * 0.76, y, { width: width * 0.24, align: 'right' });
    doc.y = Math.max(doc.y, y) + 4;
  };
  total('Total', money(inv.total_cents));
  total('Amount paid', money(inv.amount_paid_cents));
  total('Amount due', inv.status === 'VOID' ? 'None (void)' : money(inv.amount_due_cents), true);

  const payable = (inv.status === 'OPEN' || inv.status === 'UNCOLLECTIBLE') && inv.amount_due_cents > 0;
  if (payable && d.url) {
    doc.moveDown(1.5);
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Pay online:', left, doc.y, { width });
    doc.fillColor('#4b44d6').text(t(d.url), { width, link: d.url });
  }
  if (inv.status === 'VOID') {
    doc.moveDown(1.5);
    doc.font('Helvetica-Bold').fontSize(11).fillColor(INK).text('This invoice was voided: nothing is due.', left, doc.y, { width });
  }
  doc.end();
  return done;
}
