import { withTx } from '../db/tx.ts';
import { findEvent } from '../events/store.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import type { PageParams } from '../lib/pagination.ts';
import type { Services } from '../services.ts';
import {
  attemptsOf,
  findDeliveries,
  listForEvent,
  moveOpenDeliveries,
  subscribes,
  subscriptionsOf,
  type AttemptRow,
  type DeliveryRow,
} from './deliveries.ts';
import { createDeliveries } from './fanout.ts';
import { deliveryJobs } from './jobs.ts';
import { MAX_ENDPOINTS, type CreateEndpoint, type UpdateEndpoint } from './schema.ts';
import { newSigningSecret, ROTATION_OVERLAP_MS } from './signing.ts';
import * as store from './store.ts';
import { urlProblem } from './url.ts';

type Owner = store.Owner;

function checkUrl(s: Services, url: string): void {
  const problem = urlProblem(url, s.config.webhookAllowInsecureTargets);
  if (problem) throw invalidParam('url', `Invalid url: ${problem}.`);
}

export async function createEndpoint(s: Services, o: Owner, input: CreateEndpoint): Promise<store.EndpointRow> {
  checkUrl(s, input.url);
  return withTx(s, s.log, async (tx) => {
    await store.lockOwner(tx.sql, o);
    if ((await store.countEndpoints(tx.sql, o)) >= MAX_ENDPOINTS) {
      throw new ApiError(
        'resource_limit_reached',
        `An account has at most ${MAX_ENDPOINTS} webhook endpoints per mode; delete one before adding another.`,
      );
    }
    return store.insertEndpoint(tx.sql, o, {
      url: input.url,
      enabled_events: input.enabled_events,
      description: input.description ?? null,
      secret: newSigningSecret(),
    });
  });
}

/**
 * Disabling pauses the endpoint's open deliveries (their queued jobs are dropped); re-enabling puts
 * every PAUSED delivery back to PENDING and sends it at once. Attempts already made still count.
 */
export async function updateEndpoint(s: Services, o: Owner, id: string, patch: UpdateEndpoint): Promise<store.EndpointRow> {
  if (patch.url !== undefined) checkUrl(s, patch.url);
  const jobs = deliveryJobs(s);
  return withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    const next = {
      url: patch.url ?? current.url,
      description: patch.description !== undefined ? patch.description : current.description,
      enabled_events: patch.enabled_events ?? current.enabled_events,
      is_active: patch.is_active ?? current.is_active,
    };
    const row = await store.updateEndpoint(tx.sql, id, next);
    if (current.is_active && !next.is_active) {
      const paused = await moveOpenDeliveries(tx.sql, id, ['PENDING'], 'PAUSED');
      tx.afterCommit(() => jobs.remove(paused));
    } else if (!current.is_active && next.is_active) {
      const resumed = await moveOpenDeliveries(tx.sql, id, ['PAUSED'], 'PENDING');
      tx.afterCommit(() => jobs.revive(resumed, { replaceDelayed: true }));
    }
    return row;
  });
}

/** The endpoint goes; its deliveries stay as history, the open ones CANCELLED and their jobs dropped. */
export async function deleteEndpoint(s: Services, o: Owner, id: string): Promise<void> {
  const jobs = deliveryJobs(s);
  await withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    const cancelled = await moveOpenDeliveries(tx.sql, id, ['PENDING', 'PAUSED'], 'CANCELLED');
    await store.deleteEndpoint(tx.sql, id);
    tx.afterCommit(() => jobs.remove(cancelled));
  });
}

/** A new secret; the one it replaces signs beside it for 24 hours (two v1= entries). */
export async function rotateSecret(s: Services, o: Owner, id: string): Promise<store.EndpointRow> {
  return withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    return store.rotateSecret(tx.sql, id, newSigningSecret(), ROTATION_OVERLAP_MS);
  });
}

export interface DeliveriesPage {
  rows: DeliveryRow[];
  attempts: Map<string, AttemptRow[]>;
}

/** An event's deliveries, each with its attempts (GET /v1/events/:id/deliveries). */
export async function eventDeliveries(s: Services, o: Owner, eventId: string, p: PageParams): Promise<DeliveriesPage> {
  if (!(await findEvent(s.sql, o, eventId))) throw resourceMissing('event', eventId);
  const rows = await listForEvent(s.sql, o, eventId, p);
  return { rows, attempts: await attemptsOf(s.sql, rows.map((r) => r.id)) };
}

/**
 * Sends a past event again as new deliveries (new ids, so new jobs), attempt 1 at once: to one
 * endpoint of the same account and mode when `endpointId` is given (subscribed or not, the merchant
 * asked for it), else to every endpoint subscribed to the event's type now. An inactive endpoint
 * gets a PAUSED delivery, sent when it is re-enabled.
 */
export async function resendEvent(s: Services, o: Owner, eventId: string, endpointId: string | undefined): Promise<DeliveryRow[]> {
  return withTx(s, s.log, async (tx) => {
    const event = await findEvent(tx.sql, o, eventId);
    if (!event) throw resourceMissing('event', eventId);
    let targets: Array<{ id: string; is_active: boolean }>;
    if (endpointId !== undefined) {
      const endpoint = await store.findEndpoint(tx.sql, o, endpointId);
      if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId, 'endpoint_id');
      targets = [endpoint];
    } else {
      const all = await subscriptionsOf(tx.sql, [o]);
      targets = all.filter((ep) => subscribes(ep, event.type));
    }
    const created = await createDeliveries(
      tx,
      targets.map((ep) => ({ accountId: o.accountId, livemode: o.livemode, eventId: event.id, endpointId: ep.id, active: ep.is_active })),
    );
    return findDeliveries(tx.sql, created.map((d) => d.id));
  });
}
