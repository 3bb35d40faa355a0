import { withTx } from '../db/tx.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import type { Services } from '../services.ts';
import { moveOpenDeliveries } from './deliveries.ts';
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
