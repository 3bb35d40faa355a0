import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { webhookDeliveryWorker } from '../../workers/webhook-delivery.ts';
import { verifyWithStripe } from './receiver.ts';
import { eventually } from '../helpers/wait.ts';
import { createEndpoint } from './helpers.ts';
import { useReceiver } from '../helpers/receiver.ts';

const t = useTestServer({ workers: [webhookDeliveryWorker as never], env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
const rx = useReceiver();

describe('end to end through the checkout API', () => {
  it('when a checkout session is expired through the API, then a subscribed endpoint receives checkout.session.expired carrying the session', async () => {
    const a = await t.account();
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/checkout`, enabled_events: ['checkout.session.expired'] });
    const created = await t.request('POST', '/v1/checkout/sessions', {
      key: a.test,
      body: { amount: 2500, currency: 'usd', success_url: 'https://shop.example.com/ok' },
    });
    expect(created.status).toBe(200);
    const expired = await t.request('POST', `/v1/checkout/sessions/${created.body.id}/expire`, { key: a.test });
    expect(expired.status).toBe(200);
    expect(expired.body.status).toBe('EXPIRED');

    const [req] = await rx.waitFor(1, 10_000, (r) => r.path === '/checkout');
    const event = verifyWithStripe(req!, ep.signing_secret) as unknown as { type: string; data: { object: unknown } };
    expect(event.type).toBe('checkout.session.expired');
    expect(event.data.object).toEqual(expired.body);
    const delivery = await eventually(async () => {
      const [d] = await t.sql`select status, event_id, attempt_count from webhook_deliveries where endpoint_id = ${ep.id}`;
      return d?.status === 'SUCCEEDED' && d;
    });
    expect(delivery).toMatchObject({ event_id: (event as unknown as { id: string }).id, attempt_count: 1 });
  });
});
