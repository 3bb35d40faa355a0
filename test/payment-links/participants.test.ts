import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payWithCard } from '../../src/checkout/pay.ts';
import { startCheckout } from '../../src/payment-links/service.ts';
import { findPublicLink } from '../../src/payment-links/store.ts';
import { closeServices, createServices } from '../../src/compose.ts';
import type { Services } from '../../src/services.ts';
import { useTestServer } from '../helpers/server.ts';
import { createLink } from './helpers.ts';
import { DIGITS } from '../helpers/cards.ts';

const card = { number: DIGITS.visa, expMonth: 12, expYear: 2040, cvc: '123', name: 'Ada Lovelace' };
const payer = { name: 'Ada Lovelace', email: 'payer@example.com', phone: '' };

const t = useTestServer();
let key: string;
// A second composition root on the same database, from which no router is ever built: what a
// worker-only process (the sweeper) or a script calling the payment functions has.
let bare: Services;
beforeAll(async () => {
  key = (await t.account()).test;
  bare = await createServices(t.s.config, t.s.log);
});
afterAll(() => closeServices(bare));

describe('payment participants built in the composition root', () => {
  it('when services are built, then the installments, payment-links, invoices, disputes and receipts participants are in their list, with no page router mounted', () => {
    expect(bare.paymentParticipants.map((p) => p.name)).toEqual(['installments', 'payment-links', 'invoices', 'disputes', 'receipts']);
  });

  it('when a service that never mounted the link pages pays a link at its quantity_limit, then the payment is refused uncharged and the link holds one payment', async () => {
    const created = await createLink(t, key, { type: 'MULTI', quantity_limit: 1 });
    const link = (await findPublicLink(bare.sql, created.id))!;
    // Both sessions are opened before either pays: only the charge-time check can stop the second.
    const first = await startCheckout(bare, link, 'DIRECT', payer);
    const second = await startCheckout(bare, link, 'DIRECT', payer);

    const paid = await payWithCard(bare, first, card, payer.email, bare.log);
    expect(paid.kind).toBe('succeeded');
    const refused = await payWithCard(bare, second, card, payer.email, bare.log);
    expect(refused).toMatchObject({ kind: 'refused', message: 'This payment link has ended: it accepts no more payments.' });

    const payments = await t.sql`select checkout_session_id, status from payments where payment_link_id = ${link.id} order by id`;
    expect(payments).toEqual([{ checkout_session_id: first.id, status: 'SUCCEEDED' }]);
    const [row] = await t.sql`select status from payment_links where id = ${link.id}`;
    expect(row!.status).toBe('COMPLETED');
    const [open] = await t.sql`select status from checkout_sessions where id = ${second.id}`;
    expect(open!.status).toBe('OPEN');
  });
});
