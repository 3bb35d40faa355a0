import http from 'node:http';
import https from 'node:https';
import got, { type Got } from 'got';
import { guardedLookup } from './dns.ts';
import { isPublicAddress, urlProblem, type TargetPolicy } from './url.ts';

export const USER_AGENT = 'payments-service-webhooks/1.0';
/** How much of a receiver's answer the attempt log keeps. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface Outgoing {
  url: string;
  eventId: string;
  deliveryId: string;
  body: string;
  signature: string;
  /** The endpoint's custom headers (validated: none of the service's own); never logged. */
  headers?: Record<string, string>;
}

export interface AttemptResult {
  ok: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /**
   * Whether the address connected to was other than public (loopback, private: a local test-mode
   * target); null when no connection answered. The excerpt of such a target is shown only on a
   * developer's machine (deliveries.ts attemptsOf, issue 21).
   */
  targetPrivate: boolean | null;
}

/**
 * One got client per address policy: keep-alive agents whose `lookup` checks the address actually
 * connected to, no redirects followed, no retries of its own (BullMQ schedules the retries).
 */
const clients = new Map<TargetPolicy, Got>();
function client(policy: TargetPolicy): Got {
  let c = clients.get(policy);
  if (!c) {
    const lookup = guardedLookup(policy);
    c = got.extend({
      agent: {
        http: new http.Agent({ keepAlive: true, lookup, maxSockets: 256 }),
        https: new https.Agent({ keepAlive: true, lookup, maxSockets: 256 }),
      },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      decompress: false,
    });
    clients.set(policy, c);
  }
  return c;
}

const describeError = (err: unknown): string => {
  const e = err as { code?: string; message?: string };
  return (e.code ? `${e.code}: ` : '') + (e.message ?? String(err));
};

/** Reads at most RESPONSE_EXCERPT_BYTES of the answer, then lets the rest go. */
function excerpt(chunks: Buffer[]): string {
  // Postgres text holds no U+0000.
  const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  return all.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '');
}

/**
 * POSTs one signed event to a target allowed by `policy` (url.ts: the endpoint's mode and the
 * settings). Never throws: every outcome is an AttemptResult for the log.
 */
export async function send(o: Outgoing, timeoutMs: number, policy: TargetPolicy): Promise<AttemptResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const done = (r: Omit<AttemptResult, 'startedAt' | 'durationMs'>): AttemptResult => ({
    ...r,
    startedAt,
    durationMs: Math.round(performance.now() - t0),
  });
  // An IP literal is connected to without a lookup, so it is checked here as well.
  const problem = urlProblem(o.url, policy);
  if (problem) return done({ ok: false, statusCode: null, error: `refused target: the URL ${problem}`, responseBody: null, targetPrivate: null });

  return new Promise<AttemptResult>((resolve) => {
    let statusCode: number | null = null;
    let targetPrivate: boolean | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      const why = error ?? (ok ? null : `HTTP ${statusCode}${statusCode! >= 300 && statusCode! < 400 ? ' (redirects are not followed)' : ''}`);
      resolve(done({ ok, statusCode, error: why, responseBody: statusCode === null ? null : excerpt(chunks), targetPrivate }));
    };
    const stream = client(policy).stream.post(o.url, {
      body: o.body,
      headers: {
        ...o.headers,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'service-event-id': o.eventId,
        'service-delivery-id': o.deliveryId,
        'service-signature': o.signature,
      },
      timeout: { request: timeoutMs },
    });
    stream.on('response', (res: { statusCode: number; ip?: string }) => {
      statusCode = res.statusCode;
      // The address actually connected to (an unknown one counts as private: never shown by mistake).
      targetPrivate = !(res.ip && isPublicAddress(res.ip));
    });
    stream.on('data', (chunk: Buffer) => {
      if (size < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) {
        finish(null);
        stream.destroy();
      }
    });
    stream.on('end', () => finish(null));
    stream.on('error', (err) => finish(describeError(err)));
  });
}
