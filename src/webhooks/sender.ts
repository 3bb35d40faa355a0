import http from 'node:http';
import https from 'node:https';
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
 * One pair of keep-alive agents per address policy, whose `lookup` checks the address actually
 * connected to; shared by every endpoint, so each origin keeps its sockets open between deliveries.
 * A delivery is one plain `http.request` (issue 28, point 5): got's per-request work (building and
 * merging its Options, its hooks, its stream wrapper) cost more CPU than everything else a delivery
 * does in Node; nothing of got was used here that `node:http` does not do: no redirects followed, no
 * retries of its own (BullMQ schedules them), no decompression, one timeout for the whole request.
 */
const agentsByPolicy = new Map<TargetPolicy, { http: http.Agent; https: https.Agent }>();
function agents(policy: TargetPolicy): { http: http.Agent; https: https.Agent } {
  let a = agentsByPolicy.get(policy);
  if (!a) {
    const lookup = guardedLookup(policy);
    a = { http: new http.Agent({ keepAlive: true, lookup, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, lookup, maxSockets: 256 }) };
    agentsByPolicy.set(policy, a);
  }
  return a;
}

/** An endpoint's URL, checked and parsed once per policy (a handful of endpoints take most deliveries). */
const checked = new Map<string, { problem: string; url?: undefined } | { problem: null; url: URL }>();
const CHECKED_MAX = 1000;
function checkUrl(raw: string, policy: TargetPolicy): { problem: string; url?: undefined } | { problem: null; url: URL } {
  const key = `${policy} ${raw}`;
  let c = checked.get(key);
  if (!c) {
    const problem = urlProblem(raw, policy);
    c = problem ? { problem } : { problem: null, url: new URL(raw) };
    if (checked.size >= CHECKED_MAX) checked.clear();
    checked.set(key, c);
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
  const { problem, url } = checkUrl(o.url, policy);
  if (problem !== null) return done({ ok: false, statusCode: null, error: `refused target: the URL ${problem}`, responseBody: null, targetPrivate: null });

  return new Promise<AttemptResult>((resolve) => {
    let statusCode: number | null = null;
    let targetPrivate: boolean | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      const why = error ?? (ok ? null : `HTTP ${statusCode}${statusCode! >= 300 && statusCode! < 400 ? ' (redirects are not followed)' : ''}`);
      resolve(done({ ok, statusCode, error: why, responseBody: statusCode === null ? null : excerpt(chunks), targetPrivate }));
    };
    const secure = url.protocol === 'https:';
    const a = agents(policy);
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? a.https : a.http,
        headers: {
          ...o.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(o.body),
          'user-agent': USER_AGENT,
          'service-event-id': o.eventId,
          'service-delivery-id': o.deliveryId,
          'service-signature': o.signature,
        },
      });
    } catch (err) {
      // A header value Node refuses: nothing was sent.
      resolve(done({ ok: false, statusCode: null, error: describeError(err), responseBody: null, targetPrivate: null }));
      return;
    }
    // The whole request, from here to the answer's end (got's `timeout.request`, same code and message).
    const timer = setTimeout(() => {
      finish(describeError(Object.assign(new Error(`Timeout awaiting 'request' for ${timeoutMs}ms`), { code: 'ETIMEDOUT' })));
      req.destroy();
    }, timeoutMs);
    req.on('response', (res: http.IncomingMessage) => {
      statusCode = res.statusCode ?? null;
      // The address actually connected to (an unknown one counts as private: never shown by mistake).
      const ip = res.socket?.remoteAddress;
      targetPrivate = !(ip && isPublicAddress(ip));
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_EXCERPT_BYTES) {
          finish(null);
          res.destroy();
        }
      });
      res.on('end', () => finish(null));
      res.on('error', (err) => finish(describeError(err)));
      res.on('close', () => finish(res.complete ? null : 'ECONNRESET: the connection closed before the answer ended'));
    });
    req.on('error', (err) => finish(describeError(err)));
    req.end(o.body);
  });
}
