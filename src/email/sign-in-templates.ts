import { type BrandableEmail, dateTimeText, oneLine, rendered } from './layout.ts';

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

