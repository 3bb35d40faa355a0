import { beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '../../src/lib/currency.ts';
import { useTestServer } from '../helpers/server.ts';
import { createSession } from './helpers.ts';
import { Payer } from '../helpers/payer.ts';

const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const open = async (body: Record<string, unknown> = {}) => {
  const cs = await createSession(t, key, body);
  return { cs, page: await new Payer(t).get(`/checkout/${cs.id}`) };
};

describe('the hosted checkout page', () => {
  it('when an OPEN session is opened, then it shows the amount, the line items, the description, the labelled inputs and a Pay button', async () => {
    const { page } = await open({
      amount: undefined,
      line_items: [{ name: 'Green tea', quantity: 2, amount: 350 }, { name: 'Cake', quantity: 1, amount: 500 }],
      description: 'Order #42 from the tea shop',
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.html).toContain('$12.00');
    expect(page.html).toContain('Green tea');
    expect(page.html).toContain('$7.00');
    expect(page.html).toContain('Order #42 from the tea shop');
    for (const [id, label] of [['email', 'Email'], ['name', 'Name on card'], ['card_number', 'Card number'], ['expiry', 'Expiry'], ['cvc', 'CVC']]) {
      expect(page.html).toContain(`<label for="${id}">${label}</label>`);
      expect(page.html).toContain(`id="${id}" name="${id}"`);
    }
    expect(page.html).toContain('placeholder="MM/YY"');
    expect(page.html).toMatch(/<button type="submit" class="btn">Pay \$12\.00<\/button>/);
    expect(page.html).not.toContain('<script');
  });

  it.each([
    ['jpy', 1500, '¥1,500'],
    ['krw', 25000, '₩25,000'],
    ['usd', 1999, '$19.99'],
    ['eur', 5, '€0.05'],
    ['kwd', 1234, 'KWD 1.234'],
  ])('when the currency is %s, then %i is shown as %s', async (currency, amount, shown) => {
    expect(formatAmount(amount, currency).replace(/\u00a0/g, ' ')).toBe(shown);
    const { page } = await open({ currency, amount });
    expect(page.html.replace(/\u00a0/g, ' ')).toContain(`Pay ${shown}`);
  });

  it('when cancel_url is set, then a cancel link goes there; when it is not, then there is no cancel link', async () => {
    const withCancel = await open({ cancel_url: 'https://merchant.example/cart?x=1&y=2' });
    expect(withCancel.page.html).toContain('<a class="cancel" href="https://merchant.example/cart?x=1&amp;y=2">');
    const without = await open();
    expect(without.page.html).not.toContain('class="cancel"');
  });

  it('when the session has a customer, then Email is prefilled from the customer; else from customer_email', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key, body: { email: 'known@example.com' } })).body;
    expect((await open({ customer_id: cus.id, customer_email: 'other@example.com' })).page.html).toContain('value="known@example.com"');
    expect((await open({ customer_email: 'guest@example.com' })).page.html).toContain('value="guest@example.com"');
  });

  it('when merchant text holds markup, then it is escaped', async () => {
    const { page } = await open({ description: '<script>alert(1)</script>', line_items: [{ name: '<img src=x onerror=alert(1)>', quantity: 1, amount: 1999 }] });
    expect(page.html).not.toContain('<script>alert');
    expect(page.html).not.toContain('<img src=x');
    expect(page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('when the session is EXPIRED, then the page says so and offers no form', async () => {
    const cs = await createSession(t, key, { cancel_url: 'https://merchant.example/cart' });
    await t.request('POST', `/v1/checkout/sessions/${cs.id}/expire`, { key });
    const page = await new Payer(t).get(`/checkout/${cs.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('This checkout session has expired');
    expect(page.html).not.toContain('<form');
    expect(page.html).not.toContain('name="card_number"');
  });

  it('when the session id is unknown, then the page answers 404 in HTML; a path that is no session id is the API 404', async () => {
    const missing = await new Payer(t).get('/checkout/cs_00000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.html).toContain('Checkout not found');
    const other = await t.request('GET', '/checkout/whatever');
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('route_not_found');
  });

  it('when the receipt or challenge page of an OPEN session is opened, then it sends the payer back to the checkout page', async () => {
    const { cs } = await open();
    const payer = new Payer(t);
    expect((await payer.get(`/checkout/${cs.id}/receipt`)).location).toBe(`/checkout/${cs.id}`);
    expect((await payer.get(`/checkout/${cs.id}/authenticate?payment=pay_00000000000000000000000000`)).location).toBe(`/checkout/${cs.id}`);
  });
});
