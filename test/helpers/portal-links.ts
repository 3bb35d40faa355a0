import { hashPortalToken } from '../../src/customers/portal-links.ts';
import type { TestServer } from './server.ts';
import type { ReceivedMail } from './smtp.ts';

/** The portal sign-in tokens of an email's text (one per link). */
export const linkTokens = (text: string): string[] => [...new Set([...text.matchAll(/sign-in\?token=([A-Za-z0-9_-]{43})/g)].map((m) => m[1]!))];

/**
 * Whom each portal link of these emails signs into, and where it was sent (the envelope
 * recipient): read off the links themselves (portal_links keeps the token's hash).
 */
export async function portalLinkOwners(t: TestServer, mails: ReceivedMail[]): Promise<Array<{ customer_id: string; email: string; sentTo: string }>> {
  const out = [];
  for (const m of mails) {
    for (const token of linkTokens(m.text)) {
      const [row] = await t.sql<{ customer_id: string; email: string }[]>`
        select l.customer_id, c.email from portal_links l join customers c on c.id = l.customer_id where l.token_hash = ${hashPortalToken(token)}`;
      if (!row) throw new Error(`no portal link for a token of "${m.subject}"`);
      for (const to of m.to) out.push({ ...row, sentTo: to });
    }
  }
  return out;
}
