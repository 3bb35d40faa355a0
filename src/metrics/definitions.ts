import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolState } from '../db/sql.ts';
import { isCurrency } from '../lib/currency.ts';

/**
 * Every metric of the service, defined here and nowhere else (docs/operations.md, "Metrics and
 * alerts", lists them). One registry per process, built by the composition root and reached through
 * `s.metrics`: nothing registers itself on import, and prom-client's global registry is not used.
 *
 * Labels are bounded sets, never an id: route templates, HTTP methods and statuses, queue names,
 * job outcomes, repair pass names, processor operations, modes and the accepted currency codes.
 */

/** The states of a BullMQ queue reported by queue_jobs. */
export const QUEUE_STATES = ['waiting', 'delayed', 'active', 'failed'] as const;

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Event to first 2xx: from under a second (first attempt) to the 10.5 hours of the retry schedule. */
const DELIVERY_LATENCY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 21_600, 43_200];

export type Mode = 'test' | 'live';
export const modeOf = (livemode: boolean): Mode => (livemode ? 'live' : 'test');

/** `2xx` … `5xx` for an HTTP status, `none` when there was no answer (timeout, refused, blocked address). */
export function statusClass(status: number | null | undefined): string {
  if (!status || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100)}xx`;
}

/** A currency label: one of the accepted ISO 4217 codes, anything else `other` (the label set stays bounded). */
export const currencyLabel = (code: string): string => (isCurrency(code) ? code : 'other');

/** `poolStats`: this process's Postgres pool (src/db/sql.ts), read at scrape time. */
export function createMetrics(opts: { poolStats: () => PoolState | null }) {
  const registry = new Registry();
  const registers = [registry];
  // process_* and nodejs_*: CPU, memory, event loop delay, handles; per process like everything here.
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters (promtool check metrics refuses them); nodejs_active_handles,
  // _requests and _resources, by type, hold the same numbers.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);

  const pool = () => opts.poolStats();
  const m = {
    registry,

    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests answered, by route template (unmatched: no route), method and status, and how long each took; _count is the request count.',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),

    queueJobs: new Gauge({
      name: 'queue_jobs',
      help: 'Jobs of each BullMQ queue by state (waiting, delayed, active, failed), read from Redis at scrape time by the processes that run workers.',
      labelNames: ['queue', 'state'],
      registers,
    }),
    jobDuration: new Histogram({
      name: 'queue_job_duration_seconds',
      help: 'Jobs run by this process, by queue and outcome (completed, failed: one observation per attempt), and how long each took.',
      labelNames: ['queue', 'outcome'],
      buckets: JOB_BUCKETS,
      registers,
    }),

    webhookAttempts: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts, by outcome (succeeded, failed) and the status class of the answer (2xx … 5xx, none when nothing answered).',
      labelNames: ['outcome', 'status_class'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries that reached a final state: succeeded (a 2xx) or failed (attempt 7 failed).',
      labelNames: ['outcome'],
      registers,
    }),
    webhookThrottled: new Counter({
      name: 'webhook_deliveries_throttled_total',
      help: "Webhook delivery runs put off by their endpoint's rate_limit (issue 26): each moved back to delayed until its slot, no attempt used.",
      registers,
    }),
    webhookEndpointsDisabled: new Counter({
      name: 'webhook_endpoints_disabled_total',
      help: 'Webhook endpoints the service disabled because every attempt to them failed for the whole failure window (issue 26).',
      registers,
    }),
    webhookFirstSuccess: new Histogram({
      name: 'webhook_event_to_first_success_seconds',
      help: 'Time from an event to the first 2xx of each of its deliveries.',
      buckets: DELIVERY_LATENCY_BUCKETS,
      registers,
    }),
    webhookLaneReclaimed: new Counter({
      name: 'webhook_lane_reclaimed_total',
      help: 'Deliveries taken again from the first-attempt lane because the lease of the worker that took them ran out (a worker killed or stuck).',
      registers,
    }),
    webhookOldestPending: new Gauge({
      name: 'webhook_delivery_oldest_pending_age_seconds',
      help: 'Age of the oldest PENDING webhook delivery (0 when none), read from Postgres at scrape time by the processes that run workers.',
      // Registered only while a reading is good (src/metrics/scrape.ts): a process that does not read it shows no series, not a 0.
      registers: [],
    }),
    webhookOverdue: new Gauge({
      name: 'webhook_delivery_overdue_seconds',
      help: 'How long the most overdue PENDING delivery has been due without an attempt (0 when none is late), read at scrape time by the processes that run workers.',
      registers: [],
    }),

    repairRuns: new Counter({ name: 'repair_pass_runs_total', help: 'Repair passes started by this process.', labelNames: ['pass'], registers }),
    repairFailures: new Counter({
      name: 'repair_pass_failures_total',
      help: 'Repair passes of this process that threw (reason error) or did not end within REPAIR_PASS_TIMEOUT_MS (reason timeout).',
      labelNames: ['pass', 'reason'],
      registers,
    }),
    repairSkipped: new Counter({
      name: 'repair_pass_skipped_total',
      help: 'Rounds in which a repair pass was not started because its previous run, past its timeout, was still running in this process.',
      labelNames: ['pass'],
      registers,
    }),
    repairRepaired: new Counter({ name: 'repair_pass_repaired_total', help: 'Rows each repair pass repaired (enqueued again, settled, expired, sent).', labelNames: ['pass'], registers }),
    repairDuration: new Histogram({
      name: 'repair_pass_duration_seconds',
      help: 'How long each repair pass ran, to its end (a pass past its timeout is observed when it ends).',
      labelNames: ['pass'],
      buckets: JOB_BUCKETS,
      registers,
    }),
    repairLastSuccess: new Gauge({
      name: 'repair_pass_last_success_timestamp_seconds',
      help: 'When each repair pass last succeeded, in any process (repair_pass_status in Postgres, read at scrape time).',
      labelNames: ['pass'],
      registers,
    }),
    repairConsecutiveFailures: new Gauge({
      name: 'repair_pass_consecutive_failures',
      help: 'Runs of each repair pass that failed or timed out since its last success, in any process (repair_pass_status).',
      labelNames: ['pass'],
      registers,
    }),

    partitionsAhead: new Gauge({
      name: 'retention_partitions_ahead_seconds',
      help: 'How far ahead of now the newest partition of each table partitioned by time reaches (read at scrape time): an insert past it fails, so the retention job keeps it days ahead.',
      labelNames: ['table'],
      registers,
    }),
    partitionsDropped: new Counter({
      name: 'retention_partitions_dropped_total',
      help: 'Partitions dropped past their retention by the retention job of this process, by table.',
      labelNames: ['table'],
      registers,
    }),

    dbPoolConnections: new Gauge({
      name: 'db_pool_connections',
      help: "This process's Postgres connections by state: in_use (running a query or held by a transaction), idle, connecting.",
      labelNames: ['state'],
      registers,
      collect() {
        const p = pool();
        if (!p) return;
        this.set({ state: 'in_use' }, p.busy + p.reserved);
        this.set({ state: 'idle' }, p.open);
        this.set({ state: 'connecting' }, p.connecting);
      },
    }),
    dbPoolWaiting: new Gauge({
      name: 'db_pool_waiting_queries',
      help: 'Queries of this process waiting for a free Postgres connection.',
      registers,
      collect() {
        const p = pool();
        if (p) this.set(p.waiting);
      },
    }),
    dbPoolMax: new Gauge({
      name: 'db_pool_max_connections',
      help: "The size of this process's Postgres pool (DB_POOL_MAX).",
      registers,
      collect() {
        const p = pool();
        if (p) this.set(p.max);
      },
    }),
    dependencyUp: new Gauge({
      name: 'dependency_up',
      help: 'Whether Postgres and Redis answered this process within 2 s at scrape time (1) or not (0), as /readyz checks them.',
      labelNames: ['dependency'],
      registers,
    }),
    scrapeErrors: new Counter({
      name: 'metrics_scrape_errors_total',
      help: 'Scrape-time readings that failed or took over 2 s (their series are left out of that scrape), by source.',
      labelNames: ['source'],
      registers,
    }),

    emailsSent: new Counter({ name: 'emails_sent_total', help: 'Emails sent, by transport (smtp, or log without SMTP_URL).', labelNames: ['transport'], registers }),
    emailsFailed: new Counter({ name: 'emails_failed_total', help: 'Emails that became FAILED (attempts exhausted, or refused for good by the mail server).', registers }),
    secondFactorAttempts: new Counter({
      name: 'dashboard_second_factor_attempts_total',
      help: 'Answers to the second step of a dashboard sign-in, by method (code: an authenticator or recovery code; passkey) and outcome (accepted, refused, throttled).',
      labelNames: ['method', 'outcome'],
      registers,
    }),
    emailSendErrors: new Counter({ name: 'email_send_errors_total', help: 'Email send attempts that failed, retried or not.', registers }),

    processorCalls: new Counter({
      name: 'processor_calls_total',
      help: 'Calls to the card processor, by processor (simulator, stripe), operation (a Processor method) and outcome (ok, error: it threw).',
      labelNames: ['processor', 'operation', 'outcome'],
      registers,
    }),
    processorCallDuration: new Histogram({
      name: 'processor_call_duration_seconds',
      help: 'How long calls to the card processor took, by processor and operation.',
      labelNames: ['processor', 'operation'],
      buckets: HTTP_BUCKETS,
      registers,
    }),

    reportDuration: new Histogram({
      name: 'report_query_duration_seconds',
      help: 'Reports read from the rollups (issue 27): by surface (api, dashboard, csv) and interval (day, week, month), and how long each read took.',
      labelNames: ['surface', 'interval'],
      buckets: HTTP_BUCKETS,
      registers,
    }),

    sessionsCreated: new Counter({ name: 'checkout_sessions_created_total', help: 'Checkout sessions created, by mode.', labelNames: ['mode'], registers }),
    sessionsPaid: new Counter({ name: 'checkout_sessions_paid_total', help: 'Checkout sessions completed by a successful payment, by mode.', labelNames: ['mode'], registers }),
    sessionsExpired: new Counter({ name: 'checkout_sessions_expired_total', help: 'Checkout sessions expired (by time or the expire call), by mode.', labelNames: ['mode'], registers }),
    paymentsSucceeded: new Counter({ name: 'payments_succeeded_total', help: 'Payments that became SUCCEEDED (checkout, link, invoice and installment payments), by mode.', labelNames: ['mode'], registers }),
    fraudDecisions: new Counter({
      name: 'fraud_decisions_total',
      help: 'Hosted-page attempts a fraud rule or block list decided (docs/fraud.md), by outcome (the action: allow, block, review) and mode.',
      labelNames: ['outcome', 'mode'],
      registers,
    }),
    reviewsClosed: new Counter({
      name: 'payment_reviews_closed_total',
      help: 'Payments held for review that were closed, by outcome (approved, refused, expired) and mode.',
      labelNames: ['outcome', 'mode'],
      registers,
    }),
    collected: new Counter({
      name: 'payments_collected_minor_units_total',
      help: 'Money collected by SUCCEEDED payments, in the smallest unit of each currency (cents for usd, yen for jpy), by currency and mode; refunds are not subtracted.',
      labelNames: ['currency', 'mode'],
      registers,
    }),
    linkForms: new Counter({
      name: 'payment_link_forms_total',
      help: 'Payment link forms sent, by outcome: kept (sent from the bytes kept for that page), new (rendered, then kept), rendered (rendered for that load only: typed input, installment plans, a page that could not be kept).',
      labelNames: ['outcome'],
      registers,
    }),
    // Exports (issue 27): rows written by both paths, runs ended by outcome, bytes served from stored files.
    exportRows: new Counter({ name: 'export_rows_total', help: 'CSV rows written by exports, by dataset and source (stream: a GET answered as read; run: a job writing a stored file).', labelNames: ['dataset', 'source'], registers }),
    exportRuns: new Counter({ name: 'export_runs_finished_total', help: 'Export runs ended, by dataset and outcome (succeeded, failed).', labelNames: ['dataset', 'outcome'], registers }),
    exportDownloadBytes: new Counter({ name: 'export_download_bytes_total', help: 'Bytes of stored export files sent to downloads.', registers }),
  };

  const byMode = (c: Counter<'mode'>) => [c.labels({ mode: modeOf(false) }), c.labels({ mode: modeOf(true) })] as const;
  const sessionCounts = { created: byMode(m.sessionsCreated), paid: byMode(m.sessionsPaid), expired: byMode(m.sessionsExpired) };

  return {
    ...m,
    /** Set while this process runs workers: its scrapes then read the queues and the delivery backlog. */
    runsWorkers: false,
    /** One webhook delivery attempt recorded: its outcome and the class of the answer's status. */
    webhookAttempt(ok: boolean, statusCode: number | null): void {
      m.webhookAttempts.inc({ outcome: ok ? 'succeeded' : 'failed', status_class: statusClass(statusCode) });
    },
    /**
     * Checkout sessions created, paid or expired (after their commit). Through each mode's labelled
     * child, made once: `inc(labels)` hashes its label object on every call (issue 28: every create counts one).
     */
    checkoutSessions(transition: 'created' | 'paid' | 'expired', livemode: boolean, count = 1): void {
      sessionCounts[transition][livemode ? 1 : 0].inc(count);
    },
    /** A fraud rule or block list decided an attempt (after its commit). */
    fraudDecision(action: 'allow' | 'block' | 'review', livemode: boolean): void {
      m.fraudDecisions.inc({ outcome: action, mode: modeOf(livemode) });
    },
    /** A review closed (after its commit). */
    reviewClosed(outcome: 'approved' | 'refused' | 'expired', livemode: boolean): void {
      m.reviewsClosed.inc({ outcome, mode: modeOf(livemode) });
    },
    /** A payment became SUCCEEDED (call after its commit). */
    paymentSucceeded(p: { currency: string; livemode: boolean; amount_cents: number }): void {
      const mode = modeOf(p.livemode);
      m.paymentsSucceeded.inc({ mode });
      m.collected.inc({ currency: currencyLabel(p.currency), mode }, p.amount_cents);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
