import { createSession } from '../checkout/helpers.ts';
import { Payer } from '../helpers/payer.ts';
import type { TestServer } from '../helpers/server.ts';

/** The card whose refunds fail (the simulator's scripted behaviour refunds_fail). */
export const REFUNDS_FAIL_CARD = '4000 0000 0000 5126';

/** A SUCCEEDED payment, paid on the hosted page like a payer would; answers its id and session. */
export async function paidPayment(t: TestServer, key: string, opts: { amount?: number; card?: string } = {}) {
  const cs = await createSession(t, key, { amount: opts.amount ?? 1999 });
  const res = await new Payer(t).pay(cs.id, opts.card ? { card_number: opts.card } : {});
  if (res.status !== 303) throw new Error(`pay: ${res.status} ${res.html.slice(0, 300)}`);
  const session = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body;
  if (session.status !== 'COMPLETE') throw new Error(`session ${cs.id} is ${session.status}`);
  return { paymentId: session.payment_id as string, sessionId: cs.id as string };
}

export const refund = (t: TestServer, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', '/v1/refunds', { key, body, headers });

export const refundRow = async (t: TestServer, id: string) => (await t.sql`select * from refunds where id = ${id}`)[0];
export const paymentRow = async (t: TestServer, id: string) => (await t.sql`select * from payments where id = ${id}`)[0]!;
