import { recordAudit } from '../audit/store.ts';
import type { Config } from '../config.ts';
import { withinIds } from '../db/partitions.ts';
import type { Db, Sql, TxSql } from '../db/sql.ts';
import { withTx, type Tx } from '../db/tx.ts';
import { queueEmailBesides } from '../email/outbox.ts';
import { endpointDisabledEmail, endpointFailingEmail, type EndpointHealthEmailData } from '../email/webhook-templates.ts';
import type { ApiObject } from '../events/presenter.ts';
import type { Services } from '../services.ts';
import { OPERATOR_ROLES } from '../team/roles.ts';
import { moveOpenDeliveries, recordAttempts, type AttemptRecord, type DeliveryStatus } from './deliveries.ts';
import { deliveryJobs } from './jobs.ts';
import { recordEvent } from './outbox.ts';
import { presentEndpoint } from './presenter.ts';
import { addToHourly } from './stats.ts';
import { allSucceeded, recordSuccesses } from './successes.ts';
import type { EndpointRow } from './store.ts';

/**
 * Endpoint health (issue 26, point 1). Each endpoint's row carries the start of its current run of
 * failed attempts and how many there were, updated in the transaction that records the attempts'
 * outcomes (never by scanning deliveries). A success ends the run. When a failed attempt finds the
 * run older than the warning point, the owners and administrators are warned once; older than the
 * window with at least `minFailures` failed attempts, the endpoint is disabled: `is_active` false,
 * its open deliveries PAUSED (nothing dropped), a `webhook_endpoint.disabled` event for the
 * account's other endpoints, an audit entry by the service, and an email.
 */

export interface HealthSettings {
  /** How long every attempt must have failed before the endpoint is disabled. */
  windowMs: number;
  minFailures: number;
}

export const healthSettings = (c: Pick<Config, 'webhookDisableAfterMs' | 'webhookDisableMinFailures'>): HealthSettings => ({
  windowMs: c.webhookDisableAfterMs,
  minFailures: c.webhookDisableMinFailures,
});

const DAY_MS = 24 * 3600 * 1000;
/** The warning goes a day before the window ends; a window shorter than 5 days is warned a fifth of it before. */
export const warningLeadMs = (windowMs: number): number => Math.min(DAY_MS, windowMs / 5);

export type HealthAction = 'warn' | 'disable';

type Run = Pick<EndpointRow, 'is_active' | 'failing_since' | 'failed_attempts' | 'failure_warned_at'>;

/** What a run of failures calls for now: nothing, the warning (once per run), or disabling. */
export function dueAction(e: Run, h: HealthSettings, now = Date.now()): HealthAction | null {
  if (!e.is_active || !e.failing_since || e.failed_attempts < h.minFailures) return null;
  const failingMs = now - e.failing_since.getTime();
  if (failingMs >= h.windowMs) return 'disable';
  if (failingMs >= h.windowMs - warningLeadMs(h.windowMs) && !e.failure_warned_at) return 'warn';
  return null;
}

export interface Outcome {
  status: DeliveryStatus | null;
  /** What the endpoint's health now calls for (acted upon by `actOnHealth`, after this commit). */
  action: HealthAction | null;
}

/**
 * Records a batch of attempts (deliveries.ts recordAttempts) and the health of their endpoints in
 * one transaction. Only the attempts actually recorded count (a duplicate run counts nothing).
 * Healthy endpoints whose attempts succeeded are not written at all; the rows written are locked
 * in id order, so two batches never deadlock on two endpoints. A batch of successes whose endpoints
 * are all healthy is recorded by one statement instead (successes.ts: same rows, no lock on them).
 */
export async function recordOutcomes(sql: Sql, records: readonly AttemptRecord[], h: HealthSettings): Promise<Outcome[]> {
  // The usual batch, all successes to healthy endpoints: one statement (successes.ts).
  if (allSucceeded(records)) {
    const statuses = await recordSuccesses(sql, records);
    if (statuses) return statuses.map((status) => ({ status, action: null }));
  }
  return sql.begin(async (tx) => {
    const statuses = await recordAttempts(tx, records);
    const recorded = records.filter((_, i) => statuses[i] !== null);
    const runs = await updateRuns(tx, recorded);
    await addToHourly(tx, recorded);
    // A failure on an endpoint disabled meanwhile waits PAUSED, not for a retry: the endpoint rows are
    // locked now, so a re-enable either committed before (the endpoint is active) or finds it PAUSED.
    const retrying = records.filter((r, i) => statuses[i] === 'PENDING' && runs.get(r.endpointId)?.is_active === false).map((r) => r.id);
    if (retrying.length > 0) {
      const paused = new Set(
        (await tx<{ id: string }[]>`
          update webhook_deliveries set status = 'PAUSED', next_attempt_at = null, updated_at = now()
          where id = any(${retrying}::text[]) and ${withinIds(tx, 'id', retrying)} and status = 'PENDING'
          returning id`).map((r) => r.id),
      );
      records.forEach((r, i) => {
        if (paused.has(r.id)) statuses[i] = 'PAUSED';
      });
    }
    const now = Date.now();
    return records.map((r, i) => {
      const run = statuses[i] === null ? undefined : runs.get(r.endpointId);
      return { status: statuses[i]!, action: run ? dueAction(run, h, now) : null };
    });
  }) as Promise<Outcome[]>;
}

async function updateRuns(tx: TxSql, recorded: readonly AttemptRecord[]): Promise<Map<string, Run>> {
  const byEndpoint = new Map<string, { ok: boolean; failures: number; firstFailed: Date | null }>();
  for (const r of recorded) {
    const a = byEndpoint.get(r.endpointId) ?? { ok: false, failures: 0, firstFailed: null };
    if (r.result.ok) a.ok = true;
    else {
      a.failures++;
      if (!a.firstFailed || r.result.startedAt < a.firstFailed) a.firstFailed = r.result.startedAt;
    }
    byEndpoint.set(r.endpointId, a);
  }
  if (byEndpoint.size === 0) return new Map();
  const ids = [...byEndpoint.keys()];
  const okIds = ids.filter((id) => byEndpoint.get(id)!.ok);
  const failedIds = ids.filter((id) => !byEndpoint.get(id)!.ok);
  // A success in the batch ends the run (the receiver answers); only a run in progress is written.
  const locked = await tx<{ id: string }[]>`
    select id from webhook_endpoints
    where (id = any(${failedIds}::text[])) or (id = any(${okIds}::text[]) and failing_since is not null)
    order by id for no key update`;
  if (locked.length === 0) return new Map();
  const lockedIds = locked.map((l) => l.id);
  const rows = await tx<Array<Run & { id: string }>>`
    update webhook_endpoints e set
      failing_since = case when x.ok then null else coalesce(e.failing_since, x.first_failed) end,
      failed_attempts = case when x.ok then 0 else e.failed_attempts + x.failures end,
      failure_warned_at = case when x.ok then null else e.failure_warned_at end
    from unnest(${lockedIds}::text[], ${lockedIds.map((id) => String(byEndpoint.get(id)!.ok))}::text[]::boolean[],
                ${lockedIds.map((id) => byEndpoint.get(id)!.failures)}::int[],
                ${lockedIds.map((id) => byEndpoint.get(id)!.firstFailed?.toISOString() ?? null) as string[]}::timestamptz[])
      as x (id, ok, failures, first_failed)
    where e.id = x.id
    returning e.id, e.is_active, e.failing_since, e.failed_attempts, e.failure_warned_at`;
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Acts on what a recorded outcome called for, in a transaction of its own after the outcome's:
 * the endpoint's row is locked and the action checked again (another worker may have done it, a
 * success may have ended the run). A crash in between loses nothing: the next failed attempt
 * calls for it again. Returns whether it acted.
 */
export async function actOnHealth(s: Services, endpointId: string, action: HealthAction): Promise<boolean> {
  const h = healthSettings(s.config);
  const jobs = deliveryJobs(s);
  const acted = await withTx(s, s.log, async (tx) => {
    const [e] = await tx.sql<EndpointRow[]>`select * from webhook_endpoints where id = ${endpointId} for update`;
    if (!e || dueAction(e, h) !== action) return false;
    if (action === 'warn') {
      await tx.sql`update webhook_endpoints set failure_warned_at = now() where id = ${endpointId}`;
      await emailOperators(tx, s, e, 'warn', new Date(e.failing_since!.getTime() + h.windowMs));
      return true;
    }
    const [row] = await tx.sql<EndpointRow[]>`
      update webhook_endpoints set is_active = false, disabled_at = now(), updated_at = now()
      where id = ${endpointId} returning *`;
    const paused = await moveOpenDeliveries(tx.sql, endpointId, ['PENDING'], 'PAUSED');
    tx.afterCommit(() => jobs.remove(paused));
    await recordEvent(tx, s, row!.account_id, 'webhook_endpoint.disabled', presentEndpoint(row!) as ApiObject, endpointId);
    await recordAudit(tx.sql, {
      accountId: row!.account_id,
      livemode: row!.livemode,
      actor: { type: 'system', label: 'webhook endpoint health' },
      action: 'webhook_endpoint.disabled',
      object: { type: 'webhook_endpoint', id: endpointId },
      data: { failing_since: row!.failing_since!.toISOString(), failed_attempts: row!.failed_attempts, paused_deliveries: paused.length },
    });
    await emailOperators(tx, s, row!, 'disable', row!.disabled_at!);
    return true;
  });
  if (acted) {
    if (action === 'disable') s.metrics.webhookEndpointsDisabled.inc();
    s.log.warn({ endpointId, action }, action === 'disable' ? 'webhook endpoint disabled: every attempt failed for the failure window' : 'webhook endpoint failing: its operators were warned');
  }
  return acted;
}

/** The account's users who hear about its operations (team/roles.ts OPERATOR_ROLES). */
export async function operatorRecipients(db: Db, accountId: string): Promise<Array<{ id: string; email: string }>> {
  return db<Array<{ id: string; email: string }>>`
    select id, email from dashboard_users
    where account_id = ${accountId} and role = any(${OPERATOR_ROLES as string[]}::text[])
    order by id`;
}

/**
 * One email per operator, per run of failures and kind (the dedupe key names the run's start): a
 * second call for the same run sends nothing. A failing email never undoes the disabling.
 */
async function emailOperators(tx: Tx, s: Services, e: EndpointRow, action: HealthAction, disabledAt: Date): Promise<void> {
  const template = action === 'warn' ? 'webhook_endpoint_failing' : 'webhook_endpoint_disabled';
  const run = e.failing_since!.getTime();
  for (const user of await operatorRecipients(tx.sql, e.account_id)) {
    const data = (merchantName: string | null): EndpointHealthEmailData => ({
      merchantName,
      livemode: e.livemode,
      url: e.url,
      endpointId: e.id,
      failingSince: e.failing_since!,
      failedAttempts: e.failed_attempts,
      disabledAt,
      dashboardUrl: `${s.config.publicBaseUrl}/dashboard/webhooks/${e.id}`,
    });
    await queueEmailBesides(tx, s, { accountId: e.account_id, livemode: e.livemode }, {
      to: user.email,
      template,
      render: (m) => (action === 'warn' ? endpointFailingEmail(data(m.name)) : endpointDisabledEmail(data(m.name))),
      relatedObject: e.id,
      dedupeKey: `${template}:${e.id}:${run}:${user.id}`,
    });
  }
}

/** Re-enabling starts afresh: no run of failures, no warning, not disabled. */
export async function resetHealth(db: Db, endpointId: string): Promise<void> {
  await db`
    update webhook_endpoints set failing_since = null, failed_attempts = 0, failure_warned_at = null, disabled_at = null
    where id = ${endpointId}`;
}
