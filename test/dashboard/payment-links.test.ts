import { toString as qrSvg } from 'qrcode';
import { beforeAll, describe, expect, it } from 'vitest';
import { linkCountersWorker } from '../../workers/link-counters.ts';
import { eventsFor } from '../helpers/events.ts';
import { pathOf, Payer, payThroughLink } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { createLink } from '../helpers/factories.ts';

const t = useTestServer({ workers: [linkCountersWorker] });
let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };
let c: DashClient;

const links = async (accountId: string) => Number((await t.sql`select count(*) from payment_links where account_id = ${accountId}`)[0]!.count);
const linkRow = async (id: string) => (await t.sql`select * from payment_links where id = ${id}`)[0]!;
const shown = (html: string) => [...html.matchAll(/href="\/dashboard\/payment-links\/(pl_[a-z0-9]+)"/g)].map((m) => m[1]);
const slug = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;
/** The error named beside field `name`, if any. */
const fieldError = (html: string, name: string) => new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)?.[1] ?? null;
const createdId = (location: string | null) => /\/dashboard\/payment-links\/(pl_[a-z0-9]+)\?done=created$/.exec(location ?? '')![1]!;

/** Every field of the form, as a merchant fills it in: overrides replace single fields. */
const fullForm = (over: Record<string, string> = {}): Record<string, string> => ({
  amount: '25.00',
  currency: 'usd',
  type: 'MULTI',
  name: '',
  description: '',
  slug: '',
  customer_id: '',
  quantity_limit: '',
  expires_at: '',
  metadata: '',
  ...over,
});

/** The edit form of a link as the page shows it, with `over` typed over it. */
async function editForm(d: DashClient, id: string, over: Record<string, string> = {}): Promise<Record<string, string>> {
  const page = await d.get(`/dashboard/payment-links/${id}/edit`);
  expect(page.status).toBe(200);
  const form: Record<string, string> = {};
  const formHtml = /<form method="post" action="\/dashboard\/payment-links\/pl_[^"]+" novalidate>[^]*?<\/form>/.exec(page.html)![0];
  for (const m of formHtml.matchAll(/<input (?:type="([a-z-]+)" )?id="[^"]+" name="([a-z_]+)"[^>]*?(?: value="([^"]*)")?>/g)) {
    const [, type, name, value] = m;
    if (type === 'checkbox') {
      if (/ checked/.test(m[0])) form[name!] = 'on';
    } else form[name!] = value ?? '';
  }
  for (const m of formHtml.matchAll(/<textarea id="[^"]+" name="([a-z_]+)"[^>]*>([^<]*)<\/textarea>/g)) form[m[1]!] = m[2]!;
  for (const m of formHtml.matchAll(/<select id="[^"]+" name="([a-z_]+)"[^>]*>[^]*?<option value="([^"]*)" selected>/g)) form[m[1]!] = m[2]!;
  const decoded = Object.fromEntries(Object.entries(form).map(([k, v]) => [k, v.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')]));
  return { ...decoded, ...over };
}

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  c = await signedIn(t, a.accountId, 'owner@links.example');
});

describe('payment links in the dashboard: create', () => {
  it('when a link is created with every field, then the API finds it with every field and the page shows it', async () => {
    const cus = (await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'buyer@example.com' } })).body;
    const s = slug('spring-concert');
    await c.get('/dashboard/payment-links/new');
    const res = await c.post(
      '/dashboard/payment-links',
      fullForm({
        amount: '1250.5',
        currency: 'EUR',
        type: 'MULTI',
        name: 'Spring concert (internal)',
        description: 'A seat at the spring concert',
        slug: s,
        customer_id: cus.id,
        collect_name: 'on',
        collect_email: 'on',
        collect_phone: 'on',
        installment_enabled: 'on',
        quantity_limit: '40',
        expires_at: '2099-05-01T18:30',
        metadata: 'season=spring\nhall = B',
      }),
    );
    expect(res.status).toBe(303);
    const id = createdId(res.location);
    const api = await t.request('GET', `/v1/payment-links/${id}`, { key: a.test });
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({
      id,
      livemode: false,
      type: 'MULTI',
      name: 'Spring concert (internal)',
      slug: s,
      url: `${t.url}/l/${s}`,
      status: 'ACTIVE',
      amount_cents: 125050,
      currency: 'eur',
      description: 'A seat at the spring concert',
      customer_id: cus.id,
      collect_name: true,
      collect_email: true,
      collect_phone: true,
      installment_enabled: true,
      quantity_limit: 40,
      expires_at: Date.UTC(2099, 4, 1, 18, 30) / 1000,
      metadata: { season: 'spring', hall: 'B' },
    });
    expect(await eventsFor(t, id)).toEqual([]); // as through the API: links have no events

    const page = await c.get(res.location!);
    expect(page.status).toBe(200);
    for (const text of [
      'Payment link created.',
      'Spring concert (internal)',
      'A seat at the spring concert',
      '€1,250.50',
      `data-copy="${t.url}/l/${s}"`,
      `href="${t.url}/l/${s}" target="_blank"`,
      `data-copy="${t.url}/l/${s}?src=QR"`,
      `data-copy="${t.url}/l/${s}?src=WHATSAPP"`,
      `data-copy="${t.url}/l/${s}?src=EMBED"`,
      `src="/dashboard/payment-links/${id}/qr.svg"`,
      `alt="QR code of ${t.url}/l/${id}?src=QR"`,
      `href="/dashboard/payment-links/${id}/qr.svg?download=1" download=`,
      'name, email, phone',
      '2099-05-01 18:30 UTC',
      'season=spring',
      `href="/dashboard/customers/${cus.id}"`,
    ]) {
      expect(page.html, text).toContain(text);
    }
    // The internal name is the dashboard's only: the public page never shows it.
    const pub = await new Payer(t).get(`/l/${s}`);
    expect(pub.status).toBe(200);
    expect(pub.html).toContain('A seat at the spring concert');
    expect(pub.html).not.toContain('Spring concert (internal)');
  });

  it('when only the amount is given, then the API’s defaults apply (MULTI, nothing collected, no limit)', async () => {
    await c.get('/dashboard/payment-links/new');
    const res = await c.post('/dashboard/payment-links', { amount: '1200', currency: 'jpy', type: 'SINGLE' });
    expect(res.status).toBe(303);
    const api = (await t.request('GET', `/v1/payment-links/${createdId(res.location)}`, { key: a.test })).body;
    expect(api).toMatchObject({ amount_cents: 1200, currency: 'jpy', type: 'SINGLE', name: null, slug: null, description: null, quantity_limit: null, expires_at: null, metadata: {}, collect_email: false });
  });

  it.each([
    ['amount', { amount: '12.345' }, 'Enter the amount in USD with at most 2 decimal places'],
    ['amount', { amount: '' }, 'Enter the amount in USD'],
    ['amount', { amount: '1000000' }, 'must be at most 99999999'],
    ['currency', { currency: 'zzz' }, 'must be a lowercase ISO 4217 currency code'],
    ['expires_at', { expires_at: '2001-01-01T00:00' }, 'expires_at must lie in the future.'],
    ['expires_at', { expires_at: 'soon' }, 'Enter a date and time'],
    ['quantity_limit', { quantity_limit: '0' }, 'must be at least 1'],
    ['quantity_limit', { type: 'SINGLE', quantity_limit: '3' }, 'A SINGLE link takes exactly one payment'],
    ['slug', { slug: 'No Spaces' }, 'must be 3 to 64 characters'],
    ['customer_id', { customer_id: 'cus_00000000000000000000000000' }, 'customer'],
    ['metadata', { metadata: 'no equals sign' }, 'Line 1 of metadata is not key=value.'],
  ])('when %s is bad (%j), then the form comes back naming it beside the field, and nothing is written', async (field, over, message) => {
    const before = await links(a.accountId);
    await c.get('/dashboard/payment-links/new');
    const res = await c.post('/dashboard/payment-links', fullForm({ name: 'Bad one', ...over }));
    expect(res.status).toBe(400);
    expect(fieldError(res.html, field)).toContain(message);
    expect(res.html).toContain('Please check the field marked below.');
    // What was typed is kept.
    expect(res.html).toContain('value="Bad one"');
    expect(await links(a.accountId)).toBe(before);
  });

  it('when the slug is taken (by this account or another), then the form names the slug and nothing is written', async () => {
    const mine = slug('taken');
    const theirs = slug('theirs');
    await createLink(t, a.test, { slug: mine });
    await createLink(t, b.test, { slug: theirs });
    for (const s of [mine, theirs]) {
      const before = await links(a.accountId);
      await c.get('/dashboard/payment-links/new');
      const res = await c.post('/dashboard/payment-links', fullForm({ slug: s }));
      expect(res.status).toBe(400);
      expect(fieldError(res.html, 'slug')).toBe(`The slug &#39;${s}&#39; is not available: choose another one.`);
      expect(await links(a.accountId)).toBe(before);
    }
  });

  it('when the create form is submitted twice with the same key, then one link is created', async () => {
    const before = await links(a.accountId);
    await c.get('/dashboard/payment-links/new');
    const key = formKey();
    const form = fullForm({ name: 'Double click', idempotency_key: key });
    const [first, second] = await Promise.all([c.post('/dashboard/payment-links', form), c.post('/dashboard/payment-links', form)]);
    const statuses = [first.status, second.status].sort();
    // Both at once: one is created, the other waits for it (409 "still working") or follows it (303).
    expect(statuses[0]).toBe(303);
    expect(await links(a.accountId)).toBe(before + 1);
    const third = await c.post('/dashboard/payment-links', form);
    expect(third.status).toBe(303);
    expect(third.location).toBe(first.status === 303 ? first.location : second.location);
    expect(await links(a.accountId)).toBe(before + 1);
  });
});

describe('payment links in the dashboard: the list', () => {
  it('when links exist, then the list shows them newest first with their columns, filters by status and type, and pages with cursors', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'pager@links.example');
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push((await createLink(t, test, { name: `Link ${i}`, amount: 100 + i })).id);
    const single = await createLink(t, test, { type: 'SINGLE', name: null, description: 'Just a description', amount: 999 });
    await t.request('PATCH', `/v1/payment-links/${ids[1]}`, { key: test, body: { status: 'CANCELLED' } });

    const first = await d.get('/dashboard/payment-links');
    expect(first.status).toBe(200);
    expect(shown(first.html)).toEqual([single.id, ...ids.slice(2).reverse()]);
    expect(first.html).toContain('Just a description');
    expect(first.html).toContain('Link 10');
    expect(first.html).toContain('$1.10');
    expect(first.html).toContain('Single payment');
    const older = /href="([^"]+starting_after=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    const second = await d.get(older);
    expect(shown(second.html)).toEqual(ids.slice(0, 2).reverse());
    expect(second.html).toContain('CANCELLED');

    expect(shown((await d.get('/dashboard/payment-links?status=CANCELLED')).html)).toEqual([ids[1]]);
    expect(shown((await d.get('/dashboard/payment-links?type=SINGLE')).html)).toEqual([single.id]);
    expect(shown((await d.get('/dashboard/payment-links?type=SINGLE&status=CANCELLED')).html)).toEqual([]);
    const bad = await d.get('/dashboard/payment-links?type=TRIPLE');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('type');
    // Only this account's links, in this mode.
    const theirs = await createLink(t, b.test);
    const live = await createLink(t, (await t.key(accountId, 'live')));
    const all = shown((await d.get('/dashboard/payment-links?limit=100')).html);
    expect(all).toHaveLength(12);
    expect(all).not.toContain(theirs.id);
    expect(all).not.toContain(live.id);
  });
});

describe('payment links in the dashboard: edit, cancel, reactivate', () => {
  it('when a link is edited, then only the changed fields are sent and the API finds them changed', async () => {
    const link = await createLink(t, a.test, { name: 'Old name', description: 'Old text', metadata: { keep: '1', drop: '2' } });
    const form = await editForm(c, link.id, { name: 'New name', description: '', collect_email: 'on', metadata: 'keep=1\nadded=3', quantity_limit: '5' });
    expect(form.amount).toBe('25.00');
    const res = await c.post(`/dashboard/payment-links/${link.id}`, form);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/payment-links/${link.id}?done=updated`);
    const api = (await t.request('GET', `/v1/payment-links/${link.id}`, { key: a.test })).body;
    expect(api).toMatchObject({ name: 'New name', description: null, collect_email: true, quantity_limit: 5, metadata: { keep: '1', added: '3' }, amount_cents: 2500 });
    expect((await c.get(res.location!)).html).toContain('Changes saved.');
  });

  it('when a field is left as shown, then it is not sent: an expires_at with seconds (set by the API) stays exact', async () => {
    const expires = Math.floor(Date.now() / 1000) + 86_400 + 17 - (Math.floor(Date.now() / 1000) % 60);
    const link = await createLink(t, a.test, { name: 'Exact', expires_at: expires });
    const form = await editForm(c, link.id, { name: 'Exact, renamed' });
    expect(form.expires_at).toBe(new Date(expires * 1000).toISOString().slice(0, 16));
    const res = await c.post(`/dashboard/payment-links/${link.id}`, form);
    expect(res.status).toBe(303);
    const api = (await t.request('GET', `/v1/payment-links/${link.id}`, { key: a.test })).body;
    expect(api).toMatchObject({ name: 'Exact, renamed', expires_at: expires });
  });

  it('when a paid link is edited without touching the amount, then it saves; changing the amount is refused beside the field', async () => {
    const link = await createLink(t, a.test, { description: 'Paid once' });
    await payThroughLink(t, link.url);
    const ok = await c.post(`/dashboard/payment-links/${link.id}`, await editForm(c, link.id, { description: 'Paid, renamed' }));
    expect(ok.status).toBe(303);
    expect((await linkRow(link.id)).description).toBe('Paid, renamed');

    const refused = await c.post(`/dashboard/payment-links/${link.id}`, await editForm(c, link.id, { amount: '30.00', description: 'Not saved' }));
    expect(refused.status).toBe(400);
    expect(fieldError(refused.html, 'amount')).toBe('amount cannot change once the link has a successful payment.');
    expect(refused.html).toContain('value="30.00"');
    const row = await linkRow(link.id);
    expect(row.amount_cents).toBe(2500);
    expect(row.description).toBe('Paid, renamed');
  });

  it('when an edit sets a past expires_at or a taken slug, then the form names the field and nothing changes', async () => {
    const link = await createLink(t, a.test, { name: 'Stays' });
    const other = await createLink(t, a.test, { slug: slug('other') });
    const before = await linkRow(link.id);
    const past = await c.post(`/dashboard/payment-links/${link.id}`, await editForm(c, link.id, { expires_at: '2020-01-01T00:00', name: 'Changed' }));
    expect(past.status).toBe(400);
    expect(fieldError(past.html, 'expires_at')).toBe('expires_at must lie in the future.');
    const taken = await c.post(`/dashboard/payment-links/${link.id}`, await editForm(c, link.id, { slug: other.slug, name: 'Changed' }));
    expect(taken.status).toBe(400);
    expect(fieldError(taken.html, 'slug')).toContain('is not available');
    expect(await linkRow(link.id)).toEqual(before);
  });

  it('when a link is cancelled through the confirmation, then its public page says it is deactivated; reactivated, it takes payments again', async () => {
    const link = await createLink(t, a.test, { description: 'Summer camp' });
    const page = await c.get(`/dashboard/payment-links/${link.id}`);
    expect(page.html).toContain(`href="/dashboard/payment-links/${link.id}?confirm=cancel"`);
    const confirm = await c.get(`/dashboard/payment-links/${link.id}?confirm=cancel`);
    expect(confirm.html).toContain('Deactivate this payment link?');
    const res = await c.post(`/dashboard/payment-links/${link.id}/cancel`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/payment-links/${link.id}?done=cancelled`);
    expect((await linkRow(link.id)).status).toBe('CANCELLED');
    expect((await t.request('GET', `/v1/payment-links/${link.id}`, { key: a.test })).body.status).toBe('CANCELLED');
    const pub = await new Payer(t).get(pathOf(link.url));
    expect(pub.html).toContain('This payment link has been deactivated by the merchant.');
    expect(pub.html).not.toContain('<form');

    const after = await c.get(res.location!);
    expect(after.html).toContain('Payment link deactivated');
    expect(after.html).toContain(`action="/dashboard/payment-links/${link.id}/reactivate"`);
    const again = await c.post(`/dashboard/payment-links/${link.id}/reactivate`, {});
    expect(again.status).toBe(303);
    expect((await linkRow(link.id)).status).toBe('ACTIVE');
    expect((await new Payer(t).get(pathOf(link.url))).html).toContain('<form');
  });

  it('when an ended link is reactivated, then the API’s refusal is shown and nothing changes', async () => {
    const link = await createLink(t, a.test, { type: 'SINGLE' });
    await payThroughLink(t, link.url);
    expect((await linkRow(link.id)).status).toBe('COMPLETED');
    await c.get(`/dashboard/payment-links/${link.id}`);
    const res = await c.post(`/dashboard/payment-links/${link.id}/cancel`, {});
    expect(res.status).toBe(400);
    expect(res.html).toContain('This payment link has ended (completed or expired): status can no longer change.');
    expect((await linkRow(link.id)).status).toBe('COMPLETED');
  });
});

describe('payment links in the dashboard: QR code and analytics', () => {
  it('when the owner asks for the QR code, then it is an SVG of the link’s QR URL (by id, with src=QR); another account or mode gets 404', async () => {
    const link = await createLink(t, a.test, { slug: slug('qr') });
    const svg = await c.get(`/dashboard/payment-links/${link.id}/qr.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(svg.html).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="256" height="256" viewBox="0 0 \d+ \d+"/);
    // The code of the id's URL, which outlives a change of slug (the same encoder, the same options).
    expect(svg.html).toBe(await qrSvg(`${t.url}/l/${link.id}?src=QR`, { type: 'svg', width: 256, margin: 2, errorCorrectionLevel: 'M' }));
    expect(svg.html).not.toBe(await qrSvg(`${link.url}?src=QR`, { type: 'svg', width: 256, margin: 2, errorCorrectionLevel: 'M' }));
    expect(svg.headers.get('content-disposition')).toBeNull();
    const download = await c.get(`/dashboard/payment-links/${link.id}/qr.svg?download=1`);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename=payment-link-${link.slug}-qr.svg`);
    expect(download.html).toBe(svg.html);

    const other = await signedIn(t, b.accountId, 'other@links.example');
    const refused = await other.get(`/dashboard/payment-links/${link.id}/qr.svg`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    const live = await createLink(t, a.live);
    expect((await c.get(`/dashboard/payment-links/${live.id}/qr.svg`)).status).toBe(404);
    expect((await new DashClient(t).get(`/dashboard/payment-links/${link.id}/qr.svg`)).location).toBe('/dashboard/sign-in');
  });

  it('when payers view the link from the QR code and one pays, then the counters and the analytics by source show it', async () => {
    const link = await createLink(t, a.test, { amount: 1500 });
    await new Payer(t).get(`${pathOf(link.url)}?src=QR`);
    await new Payer(t).get(`${pathOf(link.url)}?src=WHATSAPP`);
    await payThroughLink(t, `${link.url}?src=QR`);
    await eventually(async () => {
      const row = await linkRow(link.id);
      return row.view_count === 3 && row.payment_count === 1;
    });
    const page = await c.get(`/dashboard/payment-links/${link.id}`);
    const row = (source: string) => new RegExp(`<tr data-source="${source}">([^]*?)</tr>`).exec(page.html)![1]!.replace(/<[^>]+>/g, '|').split('|').filter(Boolean);
    expect(row('QR')).toEqual(['QR code', '2', '1', '$15.00', '$0.00']);
    expect(row('WHATSAPP')).toEqual(['WhatsApp', '1', '0', '$0.00', '$0.00']);
    expect(row('DIRECT')).toEqual(['Direct', '0', '0', '$0.00', '$0.00']);
    expect(page.html).toMatch(/<tfoot><tr><th scope="row">All sources<\/th><td class="num">3<\/td><td class="num">1<\/td><td class="num">\$15\.00<\/td>/);
    expect(page.html).toContain('<meter min="0" max="2" value="2" aria-label="Views: QR code">');
    expect(page.html).toContain('<meter min="0" max="1500" value="1500" aria-label="Collected: QR code">');
    expect(page.html).toMatch(/data-stat="views"><p class="stat-label">Views<\/p><p class="stat">3</);
    expect(page.html).toMatch(/data-stat="collected"><p class="stat-label">Collected<\/p><p class="stat">\$15\.00</);
    // The same numbers as the API's analytics.
    const api = (await t.request('GET', `/v1/payment-links/${link.id}/analytics`, { key: a.test })).body;
    expect(api).toMatchObject({ views: 3, payments: 1, amount_collected_cents: 1500 });
  });
});

describe('payment links in the dashboard: access control', () => {
  it('when the id is unknown, malformed, another account’s or the other mode’s, then 404 and nothing changes', async () => {
    const theirs = await createLink(t, b.test, { name: 'Theirs' });
    const live = await createLink(t, a.live, { name: 'Live one' });
    await c.get('/dashboard/payment-links');
    for (const id of ['pl_00000000000000000000000000', 'nope', theirs.id, live.id]) {
      expect((await c.get(`/dashboard/payment-links/${id}`)).status, id).toBe(404);
      expect((await c.get(`/dashboard/payment-links/${id}/edit`)).status, id).toBe(404);
      expect((await c.post(`/dashboard/payment-links/${id}/cancel`, {})).status, id).toBe(404);
      expect((await c.post(`/dashboard/payment-links/${id}`, fullForm({ name: 'Hijacked' }))).status, id).toBe(404);
    }
    for (const l of [theirs, live]) expect(await linkRow(l.id)).toMatchObject({ status: 'ACTIVE', name: l.name });
  });

  it('when there is no session, a wrong or missing CSRF token, or the mode changed since the form was opened, then nothing changes', async () => {
    const link = await createLink(t, a.test, { name: 'Guarded' });
    const anon = new DashClient(t);
    for (const path of ['/dashboard/payment-links', '/dashboard/payment-links/new', `/dashboard/payment-links/${link.id}`]) {
      expect((await anon.get(path)).location, path).toBe('/dashboard/sign-in');
    }
    expect((await anon.post(`/dashboard/payment-links/${link.id}/cancel`, {})).location).toBe('/dashboard/sign-in');
    expect((await anon.post('/dashboard/payment-links', fullForm())).location).toBe('/dashboard/sign-in');

    const d = await signedIn(t, a.accountId, 'csrf@links.example');
    const before = await links(a.accountId);
    await d.get(`/dashboard/payment-links/${link.id}?confirm=cancel`);
    expect((await d.post(`/dashboard/payment-links/${link.id}/cancel`, { _csrf: 'forged' })).status).toBe(403);
    expect((await d.send('POST', `/dashboard/payment-links/${link.id}/cancel`, { form_mode: 'test', idempotency_key: formKey() })).status).toBe(403);
    expect((await d.post('/dashboard/payment-links', fullForm({ _csrf: 'forged' }))).status).toBe(403);
    expect((await d.post(`/dashboard/payment-links/${link.id}`, await editForm(d, link.id, { name: 'Forged', _csrf: 'x' }))).status).toBe(403);

    await d.get('/dashboard/payment-links/new');
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/payment-links' });
    expect((await d.post('/dashboard/payment-links', fullForm({ form_mode: 'test' }))).status).toBe(409);
    expect((await d.post(`/dashboard/payment-links/${link.id}/cancel`, { form_mode: 'test' })).status).toBe(409);
    expect(await links(a.accountId)).toBe(before);
    expect(await linkRow(link.id)).toMatchObject({ status: 'ACTIVE', name: 'Guarded' });
  });
});
