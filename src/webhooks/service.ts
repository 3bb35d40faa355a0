import { withTx } from '../db/tx.ts';
import { recordAudit, type AuditActor } from '../audit/store.ts';
import type { EventType } from '../events/catalogue.ts';
import type { ApiObject, EventObject } from '../events/presenter.ts';
import { findEvent, insertEvents } from '../events/store.ts';
import { ApiError, invalidParam, resourceMissing } from '../lib/errors.ts';
import type { PageParams } from '../lib/pagination.ts';
import type { Services } from '../services.ts';
import {
  attemptsOf,
  endpointsOfEvent,
  failedSince,
  findDeliveries,
  listForEndpoint,
  listForEvent,
  moveOpenDeliveries,
  subscribes,
  subscriptionsOf,
  type AttemptRow,
  type DeliveryRow,
  type EndpointDeliveryRow,
} from './deliveries.ts';
import { createDeliveries, throttleRoutes } from './fanout.ts';
import { resetHealth } from './health.ts';
import type { WebhookEndpointStats } from './presenter.ts';
import { hourlyOf, last24Hours, periodStats } from './stats.ts';
import { deliveryJobs } from './jobs.ts';
import { unorder } from './ordering.ts';
import { resetThrottle } from './throttle.ts';
import { MAX_ENDPOINTS, MAX_HEADERS, type CreateEndpoint, type ListEndpointDeliveries, type UpdateEndpoint } from './schema.ts';
import { newSigningSecret, ROTATION_OVERLAP_MS } from './signing.ts';
import * as store from './store.ts';
import { localTargetAdvice, targetPolicy, urlProblem } from './url.ts';

type Owner = store.Owner;

/** The URL rules of the endpoint's mode (url.ts); a refusal says what to do instead (listen, the setting). */
function checkUrl(s: Services, o: Owner, url: string): void {
  const problem = urlProblem(url, targetPolicy(s.config, o.livemode));
  if (!problem) return;
  const advice = localTargetAdvice(url, o.livemode, s.config);
  throw invalidParam('url', `Invalid url: ${problem}.${advice ? ` ${advice}` : ''}`);
}

export async function createEndpoint(s: Services, o: Owner, input: CreateEndpoint, actor: AuditActor): Promise<store.EndpointRow> {
  checkUrl(s, o, input.url);
  return withTx(s, s.log, async (tx) => {
    await store.lockOwner(tx.sql, o);
    if ((await store.countEndpoints(tx.sql, o)) >= MAX_ENDPOINTS) {
      throw new ApiError(
        'resource_limit_reached',
        `An account has at most ${MAX_ENDPOINTS} webhook endpoints per mode; delete one before adding another.`,
      );
    }
    const row = await store.insertEndpoint(tx.sql, o, {
      url: input.url,
      enabled_events: input.enabled_events,
      description: input.description ?? null,
      secret: newSigningSecret(),
      // Validated by CreateEndpoint: no null value is accepted on create.
      headers: (input.headers ?? {}) as Record<string, string>,
      rate_limit: input.rate_limit ?? null,
      ordered: input.ordered ?? false,
    });
    await audit(tx.sql, o, actor, 'webhook_endpoint.created', row.id, { url: row.url, enabled_events: row.enabled_events, rate_limit: row.rate_limit, ordered: row.ordered });
    return row;
  });
}

/**
 * Disabling pauses the endpoint's open deliveries (their queued jobs are dropped); re-enabling puts
 * every PAUSED delivery back to PENDING and sends it at once, and starts its health afresh (an
 * endpoint the service disabled is `healthy` again). Attempts already made still count.
 */
export async function updateEndpoint(s: Services, o: Owner, id: string, patch: UpdateEndpoint, actor: AuditActor): Promise<store.EndpointRow> {
  if (patch.url !== undefined) checkUrl(s, o, patch.url);
  const jobs = deliveryJobs(s);
  return withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    const next = {
      url: patch.url ?? current.url,
      description: patch.description !== undefined ? patch.description : current.description,
      enabled_events: patch.enabled_events ?? current.enabled_events,
      is_active: patch.is_active ?? current.is_active,
      headers: patch.headers ? mergeHeaders(current.headers, patch.headers) : current.headers,
      rate_limit: patch.rate_limit !== undefined ? patch.rate_limit : current.rate_limit,
      ordered: patch.ordered ?? current.ordered,
    };
    let row = await store.updateEndpoint(tx.sql, id, next);
    await audit(tx.sql, o, actor, 'webhook_endpoint.updated', id, patch);
    // A new rate, or a pause or resume: the bucket starts afresh (no slots handed out under the old state).
    if (next.rate_limit !== current.rate_limit || next.is_active !== current.is_active) tx.afterCommit(() => resetThrottle(s.redis, s.config.redisPrefix, id));
    if (current.ordered && !next.ordered) {
      const unparked = await unorder(tx.sql, id);
      tx.afterCommit(() => jobs.revive(unparked));
    }
    if (current.is_active && !next.is_active) {
      const paused = await moveOpenDeliveries(tx.sql, id, ['PENDING'], 'PAUSED');
      tx.afterCommit(() => jobs.remove(paused));
    } else if (!current.is_active && next.is_active) {
      await resetHealth(tx.sql, id);
      const resumed = await moveOpenDeliveries(tx.sql, id, ['PAUSED'], 'PENDING');
      // A throttled endpoint's held deliveries take their slots at once, in one reservation.
      const routes = throttleRoutes(resumed.map((d) => ({ id: d, endpoint_id: id })), [{ endpointId: id, rateLimit: next.rate_limit }]);
      tx.afterCommit(() => jobs.revive(resumed, { replaceDelayed: true, routes }));
      row = { ...row, failing_since: null, failed_attempts: 0, failure_warned_at: null, disabled_at: null };
    }
    return row;
  });
}

/** A PATCH of headers: the names given are set (replacing a stored name of any case) or, given null, removed. */
function mergeHeaders(current: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const patched = new Set(Object.keys(patch).map((n) => n.toLowerCase()));
  const next: Record<string, string> = Object.fromEntries(Object.entries(current).filter(([n]) => !patched.has(n.toLowerCase())));
  for (const [name, value] of Object.entries(patch)) if (value !== null) next[name] = value;
  if (Object.keys(next).length > MAX_HEADERS) throw invalidParam('headers', `An endpoint has at most ${MAX_HEADERS} headers: remove some (give them null) before adding others.`);
  return next;
}

/** The endpoint goes; its deliveries stay as history, the open ones CANCELLED and their jobs dropped. */
export async function deleteEndpoint(s: Services, o: Owner, id: string, actor: AuditActor): Promise<void> {
  const jobs = deliveryJobs(s);
  await withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    const cancelled = await moveOpenDeliveries(tx.sql, id, ['PENDING', 'PAUSED'], 'CANCELLED');
    await store.deleteEndpoint(tx.sql, id);
    await audit(tx.sql, o, actor, 'webhook_endpoint.deleted', id, { url: current.url });
    tx.afterCommit(() => jobs.remove(cancelled));
    tx.afterCommit(() => resetThrottle(s.redis, s.config.redisPrefix, id));
  });
}

/** A new secret; the one it replaces signs beside it for 24 hours (two v1= entries). */
export async function rotateSecret(s: Services, o: Owner, id: string, actor: AuditActor): Promise<store.EndpointRow> {
  return withTx(s, s.log, async (tx) => {
    const current = await store.findEndpoint(tx.sql, o, id, true);
    if (!current) throw resourceMissing('webhook_endpoint', id);
    const row = await store.rotateSecret(tx.sql, id, newSigningSecret(), ROTATION_OVERLAP_MS);
    await audit(tx.sql, o, actor, 'webhook_endpoint.secret_rotated', id);
    return row;
  });
}

/** The audit event of an endpoint change, in its transaction: never the signing secret. */
const audit = (sql: Parameters<typeof recordAudit>[0], o: Owner, actor: AuditActor, action: string, id: string, data: Record<string, unknown> = {}) =>
  recordAudit(sql, { accountId: o.accountId, livemode: o.livemode, actor, action, object: { type: 'webhook_endpoint', id }, data });

export interface DeliveriesPage<R extends DeliveryRow = DeliveryRow> {
  rows: R[];
  attempts: Map<string, AttemptRow[]>;
}

/** An event's deliveries, each with its attempts (GET /v1/events/:id/deliveries). */
export async function eventDeliveries(s: Services, o: Owner, eventId: string, p: PageParams): Promise<DeliveriesPage> {
  if (!(await findEvent(s.sql, o, eventId))) throw resourceMissing('event', eventId);
  const rows = await listForEvent(s.sql, o, eventId, p);
  return { rows, attempts: await attemptsOf(s.sql, rows.map((r) => r.id), s.config.localSetup) };
}

/**
 * Sends a past event again as new deliveries (new ids, so new jobs), attempt 1 at once: to one
 * endpoint of the same account and mode when `endpointId` is given (subscribed or not, the merchant
 * asked for it), else to every endpoint subscribed to the event's type now. An inactive endpoint
 * gets a PAUSED delivery, sent when it is re-enabled. A sample event (a test event) only ever goes
 * to the endpoint it was sent to: without `endpointId` to that one, and another one is refused.
 */
export async function resendEvent(s: Services, o: Owner, eventId: string, endpointId: string | undefined): Promise<DeliveryRow[]> {
  return withTx(s, s.log, async (tx) => {
    const event = await findEvent(tx.sql, o, eventId);
    if (!event) throw resourceMissing('event', eventId);
    let targets: Array<{ id: string; is_active: boolean; ordered: boolean; rate_limit: number | null }>;
    const sentTo = event.sample ? await endpointsOfEvent(tx.sql, event.id) : [];
    if (endpointId !== undefined) {
      const endpoint = await store.findEndpoint(tx.sql, o, endpointId);
      if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId, 'endpoint_id');
      if (event.sample && !sentTo.includes(endpoint.id)) {
        throw invalidParam('endpoint_id', 'This event is a sample sent by a test event: it can only be sent again to the endpoint it was sent to.');
      }
      targets = [endpoint];
    } else {
      const all = await subscriptionsOf(tx.sql, [o]);
      targets = event.sample ? all.filter((ep) => sentTo.includes(ep.id)) : all.filter((ep) => subscribes(ep, event.type));
    }
    const created = await createDeliveries(
      tx,
      s,
      targets.map((ep) => ({ accountId: o.accountId, livemode: o.livemode, eventId: event.id, endpointId: ep.id, active: ep.is_active, objectId: ep.ordered ? event.data.object.id : null, rateLimit: ep.rate_limit })),
    );
    return findDeliveries(tx.sql, created.map((d) => d.id));
  });
}

/** An endpoint's deliveries, each with its attempts and its event's type (GET /v1/webhook-endpoints/:id/deliveries). */
export async function endpointDeliveries(s: Services, o: Owner, endpointId: string, q: ListEndpointDeliveries): Promise<DeliveriesPage<EndpointDeliveryRow>> {
  if (!(await store.findEndpoint(s.sql, o, endpointId))) throw resourceMissing('webhook_endpoint', endpointId);
  const rows = await listForEndpoint(s.sql, o, endpointId, q, q.status);
  return { rows, attempts: await attemptsOf(s.sql, rows.map((r) => r.id), s.config.localSetup) };
}

/** How many failed deliveries one retry-failed call sends again; beyond it the answer says has_more. */
export const RETRY_FAILED_MAX = 1000;

/**
 * Sends again, as new deliveries (the mechanism of resendEvent: new rows, attempt 1 at once, jobs
 * after commit), every event whose latest delivery to this endpoint FAILED and was created at or
 * after `since` (Unix seconds), oldest first, at most RETRY_FAILED_MAX. The endpoint's row is locked
 * for the transaction, so retry-alls of one endpoint run one after the other and the second finds
 * the deliveries the first made: each failed (event, endpoint) is sent again once. A paused
 * endpoint gets PAUSED deliveries, sent when it is resumed.
 */
export async function retryFailed(s: Services, o: Owner, endpointId: string, since: number): Promise<{ rows: DeliveryRow[]; hasMore: boolean }> {
  return withTx(s, s.log, async (tx) => {
    const endpoint = await store.findEndpoint(tx.sql, o, endpointId, true);
    if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId);
    // A statement of its own after the lock: under read committed it sees what an earlier holder committed.
    const events = await failedSince(tx.sql, o, endpointId, since, RETRY_FAILED_MAX + 1);
    const created = await createDeliveries(
      tx,
      s,
      events.slice(0, RETRY_FAILED_MAX).map((e) => ({
        accountId: o.accountId,
        livemode: o.livemode,
        eventId: e.event_id,
        endpointId,
        active: endpoint.is_active,
        objectId: endpoint.ordered ? e.object_id : null,
        rateLimit: endpoint.rate_limit,
      })),
    );
    return { rows: await findDeliveries(tx.sql, created.map((d) => d.id)), hasMore: events.length > RETRY_FAILED_MAX };
  });
}

/**
 * A test event: records `object` as a sample event of `type` (stored with `sample`, so it can be read
 * by id and its delivery inspected, but it is not listed by GET /v1/events) and delivers it to this
 * endpoint alone, signed and logged as any delivery. There is no fan-out: no other endpoint ever
 * receives it. The caller builds the sample (src/test-events/): this component only records and
 * delivers what it is given. A paused endpoint is refused: a test is sent now or not at all.
 */
export async function sendSampleEvent(
  s: Services,
  o: Owner,
  endpointId: string,
  type: EventType,
  object: ApiObject,
): Promise<{ event: EventObject; delivery: DeliveryRow }> {
  if (object.livemode !== o.livemode) throw new Error('a sample object must be of the mode it is sent in');
  return withTx(s, s.log, async (tx) => {
    // Locked: a pause or a delete waits until the delivery exists, and then pauses or cancels it.
    const endpoint = await store.findEndpoint(tx.sql, o, endpointId, true);
    if (!endpoint) throw resourceMissing('webhook_endpoint', endpointId);
    if (!endpoint.is_active) {
      throw new ApiError('resource_invalid_state', 'This webhook endpoint is paused: resume it (is_active: true) before sending it a test event.');
    }
    const [event] = await insertEvents(tx.sql, [{ accountId: o.accountId, type, object }], { sample: true });
    const created = await createDeliveries(tx, s, [{ accountId: o.accountId, livemode: o.livemode, eventId: event!.id, endpointId, active: true, objectId: endpoint.ordered ? object.id : null, rateLimit: endpoint.rate_limit }]);
    const [delivery] = await findDeliveries(tx.sql, created.map((d) => d.id));
    return { event: event!, delivery: delivery! };
  });
}

/** An endpoint's analytics (GET /v1/webhook-endpoints/:id/stats, the dashboard's chart): one indexed query. */
export async function endpointStats(s: Services, o: Owner, endpointId: string, now = new Date()): Promise<WebhookEndpointStats> {
  if (!(await store.findEndpoint(s.sql, o, endpointId))) throw resourceMissing('webhook_endpoint', endpointId);
  const rows = await hourlyOf(s.sql, endpointId, now);
  const timeout = s.config.webhookTimeoutMs;
  return {
    object: 'webhook_endpoint_stats',
    endpoint_id: endpointId,
    last_24_hours: periodStats(rows, new Date(now.getTime() - 24 * 3600_000), timeout),
    last_30_days: periodStats(rows, new Date(now.getTime() - 30 * 24 * 3600_000), timeout),
    hourly: last24Hours(rows, now).map((h) => ({ hour: Math.floor(h.hour.getTime() / 1000), attempts: h.attempts, succeeded: h.succeeded })),
  };
}
