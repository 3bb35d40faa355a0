import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { Payer, pathOf } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession } from './helpers.ts';
import { createLink } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

// What a newcomer ran into following the README (issue 15, point 8): the checkout page's address
// after a decline, the favicon, the name typed on a link page, and the customer filter's two names.
const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

describe('the hosted pages as a newcomer meets them', () => {
  it('when …/pay is reloaded after a declined card (a GET), then the payer is sent to the page of the session, not a JSON 404', async () => {
    const cs = await createSession(t, key);
    const payer = new Payer(t);
    const declined = await payer.pay(cs.id, { card_number: CARDS.declined });
    expect(declined.status).toBe(402);
    const reload = await payer.get(`/checkout/${cs.id}/pay`);
    expect(reload.status).toBe(303);
    expect(reload.location).toBe(`/checkout/${cs.id}`);
    const page = await payer.get(reload.location!);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Name on card');
    // A session that does not exist: the 404 page, not JSON.
    const missing = await payer.get(`/checkout/${newId('cs')}/pay`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('when a page is opened, then it names its icon inline, and /favicon.ico answers 204 rather than 404', async () => {
    const cs = await createSession(t, key);
    const page = await new Payer(t).get(`/checkout/${cs.id}`);
    expect(page.html).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
    const dash = await fetch(`${t.url}/dashboard/sign-in`).then((r) => r.text());
    expect(dash).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
    const icon = await fetch(`${t.url}/favicon.ico`);
    expect(icon.status).toBe(204);
    expect(icon.headers.get('cache-control')).toContain('max-age');
  });

  it('when a payer types their name on a payment link page, then the checkout page fills Name on card with it', async () => {
    const link = await createLink(t, key, { collect_name: true });
    const payer = new Payer(t);
    const page = await payer.get(pathOf(link.url));
    const src = /name="src" value="([A-Z]+)"/.exec(page.html)![1]!;
    const started = await payer.post(pathOf(link.url), { src, name: 'Grace Hopper' });
    expect(started.status).toBe(303);
    const checkout = await payer.get(pathOf(started.location!));
    expect(checkout.html).toMatch(/id="name"[^>]*value="Grace Hopper"/);
  });
});

describe('the customer filter under either name', () => {
  it('when payments and sessions are listed with customer or customer_id, then both names filter alike, and two different values are a 400 naming customer', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key, body: { email: 'filter@example.com' } })).body;
    const mine = await createSession(t, key, { customer_id: cus.id });
    await createSession(t, key);
    await new Payer(t).pay(mine.id);
    for (const path of ['/v1/payments', '/v1/checkout/sessions', '/v1/invoices']) {
      const byCustomer = await t.request('GET', `${path}?customer=${cus.id}`, { key });
      const byCustomerId = await t.request('GET', `${path}?customer_id=${cus.id}`, { key });
      expect(byCustomer.status, path).toBe(200);
      expect(byCustomerId.body.data, path).toEqual(byCustomer.body.data);
      expect(byCustomer.body.data.every((o: { customer_id: string }) => o.customer_id === cus.id), path).toBe(true);
      const both = await t.request('GET', `${path}?customer=${cus.id}&customer_id=cus_00000000000000000000000000`, { key });
      expect(both.status, path).toBe(400);
      expect(both.body.error.param, path).toBe('customer');
    }
    expect((await t.request('GET', `/v1/payments?customer=${cus.id}`, { key })).body.data).toHaveLength(1);
    expect((await t.request('GET', `/v1/checkout/sessions?customer=${cus.id}`, { key })).body.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
  });
});
