import { formatAmount } from '../lib/currency.ts';
import { type BrandableEmail, cardText, dateTimeText, oneLine, rendered } from './layout.ts';

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
