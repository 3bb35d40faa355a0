import type { EventObject } from '../events/presenter.ts';
import type { Owner } from '../lib/owner.ts';
import type { Services } from '../services.ts';
import type { DeliveryRow } from '../webhooks/deliveries.ts';
import { sendSampleEvent } from '../webhooks/service.ts';
import { sampleObject } from './samples.ts';
import type { SendTestEvent } from './schema.ts';

/**
 * Sends a test event to one endpoint: a sample of the type's object (samples.ts), recorded and
 * delivered by the webhooks component to that endpoint alone (sendSampleEvent). The API's
 * `POST /v1/webhook-endpoints/:id/test` and the dashboard's "Send test event" both call this.
 */
export async function sendTestEvent(s: Services, o: Owner, endpointId: string, input: SendTestEvent): Promise<{ event: EventObject; delivery: DeliveryRow }> {
  const object = sampleObject(input.type, o.livemode, { checkoutUrl: s.config.checkoutUrl, invoiceUrl: s.config.invoiceUrl });
  return sendSampleEvent(s, o, endpointId, input.type, object);
}
