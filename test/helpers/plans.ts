import { CARDS } from './cards.ts';
import { Payer, pathOf } from './payer.ts';
import type { TestServer } from './server.ts';

export { createInstallmentLink } from './factories.ts';

/**
 * A payer on a link page choosing `plan` (`3-month`, or `full`), agreeing, and landing on the hosted
 * checkout of the first part: answers the payer (its CSRF token read from the checkout page) and the session id.
 */
export async function choosePlan(t: TestServer, linkUrl: string, form: Record<string, string> = {}) {
  const payer = new Payer(t);
  const page = await payer.get(pathOf(linkUrl));
  if (page.status !== 200) throw new Error(`link page: ${page.status}`);
  const src = /name="src" value="([A-Z]+)"/.exec(page.html)![1]!;
  const posted = await payer.post(pathOf(linkUrl).split('?')[0]!, { src, plan: '3-month', agree: 'yes', email: 'ada@example.com', name: 'Ada Lovelace', ...form });
  if (posted.status !== 303 || !posted.location) return { payer, sessionId: null, answer: posted };
  const sessionId = /\/(cs_[0-9a-z]+)/.exec(posted.location)![1]!;
  const checkout = await payer.get(pathOf(posted.location));
  return { payer, sessionId, answer: posted, checkout };
}

/** Chooses a plan on the link and pays its first part with `card`: answers the plan row (null when none was made). */
export async function startPlan(t: TestServer, linkUrl: string, card: string = CARDS.visa, form: Record<string, string> = {}) {
  const chosen = await choosePlan(t, linkUrl, form);
  if (!chosen.sessionId) throw new Error(`no checkout: ${chosen.answer.status} ${chosen.answer.html.slice(0, 500)}`);
  const paid = await chosen.payer.pay(chosen.sessionId, { card_number: card, email: form.email ?? 'ada@example.com' });
  const [plan] = await t.sql`select * from installment_plans where checkout_session_id = ${chosen.sessionId}`;
  return { ...chosen, paid, plan: plan ?? null };
}

export const partsOf = (t: TestServer, planId: string) => t.sql`select * from installments where plan_id = ${planId} order by number`;
