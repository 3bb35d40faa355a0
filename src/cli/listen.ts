import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newId } from '../lib/ids.ts';
import { serviceAddress, type AddressEnv } from '../lib/service-address.ts';
import { nowUnix } from '../lib/time.ts';
import { send } from '../webhooks/sender.ts';
import { signatureHeader } from '../webhooks/signing.ts';
import { urlProblem } from '../webhooks/url.ts';
import { ApiClient, FatalApiError, TransientApiError, type ApiList } from './api.ts';
import { EventFollower, type ListedEvent } from './follow.ts';

/**
 * `payments-service listen`: follows the test events of the key's account through the public API
 * and forwards each one, signed with a local secret exactly as a webhook delivery is, to a local URL.
 * Nothing is registered with the service: it only reads what a test key may read.
 */

export const LISTEN_USAGE = `Usage: payments-service listen --forward-to <url> [options]

Forwards the test events of your account, as they happen, to a local URL, signed like webhook
deliveries with a local secret (printed at start, the same on every run with the same API key).

Options:
  --forward-to <url>   where to POST each event, e.g. http://localhost:4000/webhooks (required)
  --api-key <sk_test_…> a test secret key (default: the PAYMENTS_API_KEY environment variable)
  --api-base <url>     the service (default: PAYMENTS_API_BASE, else PUBLIC_BASE_URL, else
                       http://localhost:$PORT, 3000 without PORT)
  --events <a,b,…>     forward only these event types (default: all; see GET /v1/event-types)
  --since <unix>       first forward the events created since this Unix time (default: only new ones)
  --interval <ms>      how often to ask the service for new events (default: 1000)
  --print-secret       print the local signing secret and exit
  -h, --help           show this help
`;

const DEFAULT_INTERVAL_MS = 1000;
const MAX_BACKOFF_MS = 5000;
/** As long as the service gives a webhook receiver (WEBHOOK_TIMEOUT_MS's default). */
const FORWARD_TIMEOUT_MS = 10_000;

export interface ListenOptions {
  apiKey: string;
  apiBase: string;
  /** Where apiBase came from, said when the service cannot be reached. */
  apiBaseFrom: '--api-base' | ReturnType<typeof serviceAddress>['from'];
  forwardTo: string;
  /** null: every type. */
  events: string[] | null;
  /** Unix seconds; null: only events from now on. */
  since: number | null;
  intervalMs: number;
}

/** Where listen writes: event lines and its secret on `out`, the API's comings and goings and errors on `err`. */
export interface ListenIo {
  out(line: string): void;
  err(line: string): void;
}

export type ParsedArgs =
  | { kind: 'help' }
  | { kind: 'error'; message: string }
  | { kind: 'print-secret'; secret: string }
  | { kind: 'listen'; options: ListenOptions };

/**
 * The local signing secret: derived from the API key (HMAC-SHA256 keyed by the key over a fixed
 * label), so the same key gives the same secret on every run and every machine, with no file to keep,
 * and the secret reveals nothing of the key. Same shape as an endpoint's secret.
 */
export function localSigningSecret(apiKey: string): string {
  return `whsec_${createHmac('sha256', apiKey).update('payments-service listen: local webhook signing secret').digest('base64url')}`;
}

const intArg = (v: string | undefined, name: string, min: number, max: number): number | string | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d{1,16}$/.test(v) || Number(v) < min || Number(v) > max) return `${name} must be an integer between ${min} and ${max}`;
  return Number(v);
};

/**
 * Reads the command line (after `listen`). The key comes from --api-key or `env.PAYMENTS_API_KEY`;
 * the service from --api-base, else the commands' one rule (src/lib/service-address.ts).
 */
export function parseListenArgs(argv: readonly string[], env: AddressEnv & { PAYMENTS_API_KEY?: string | undefined }): ParsedArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        'forward-to': { type: 'string' },
        'api-key': { type: 'string' },
        'api-base': { type: 'string' },
        events: { type: 'string' },
        since: { type: 'string' },
        interval: { type: 'string' },
        'print-secret': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { kind: 'error', message: `${(err as Error).message.split('\n')[0]} (see --help)` };
  }
  if (values.help) return { kind: 'help' };

  const apiKey = values['api-key'] ?? env.PAYMENTS_API_KEY;
  if (!apiKey) return { kind: 'error', message: 'no API key: pass --api-key sk_test_… or set PAYMENTS_API_KEY' };
  if (apiKey.startsWith('sk_live_')) return { kind: 'error', message: 'listen works in test mode only: use a test key (sk_test_…), not a live key' };
  if (!apiKey.startsWith('sk_test_')) return { kind: 'error', message: 'the API key is not a test secret key (sk_test_…)' };
  if (values['print-secret']) return { kind: 'print-secret', secret: localSigningSecret(apiKey) };

  const forwardTo = values['forward-to'];
  if (!forwardTo) return { kind: 'error', message: '--forward-to <url> is required, e.g. --forward-to http://localhost:4000/webhooks' };
  const targetProblem = urlProblem(forwardTo, 'any');
  if (targetProblem) return { kind: 'error', message: `--forward-to ${targetProblem}` };
  const fallback = serviceAddress(env);
  const apiBase = values['api-base'] ?? fallback.url;
  const apiBaseFrom = values['api-base'] !== undefined ? '--api-base' : fallback.from;
  const baseProblem = urlProblem(apiBase, 'any');
  if (baseProblem) return { kind: 'error', message: `${apiBaseFrom === 'default' || apiBaseFrom === 'PORT' ? '--api-base' : apiBaseFrom} ${baseProblem}` };

  let events: string[] | null = null;
  if (values.events !== undefined) {
    events = values.events.split(',').map((t) => t.trim());
    if (events.some((t) => t === '')) return { kind: 'error', message: '--events takes event types separated by commas, e.g. --events payment.succeeded,refund.created' };
  }
  const since = intArg(values.since, '--since', 0, nowUnix() + 60);
  const interval = intArg(values.interval, '--interval', 100, 60_000);
  if (typeof since === 'string') return { kind: 'error', message: `${since} (a Unix time in seconds, not in the future)` };
  if (typeof interval === 'string') return { kind: 'error', message: interval };
  return { kind: 'listen', options: { apiKey, apiBase, apiBaseFrom, forwardTo, events, since: since ?? null, intervalMs: interval ?? DEFAULT_INTERVAL_MS } };
}

const clock = () => new Date().toTimeString().slice(0, 8);

const ORIGIN: Record<ListenOptions['apiBaseFrom'], string> = {
  '--api-base': 'from --api-base',
  PAYMENTS_API_BASE: 'from PAYMENTS_API_BASE',
  PUBLIC_BASE_URL: 'from PUBLIC_BASE_URL',
  PORT: 'from PORT',
  default: 'the default: no --api-base, PAYMENTS_API_BASE, PUBLIC_BASE_URL or PORT set',
};

/**
 * Prints one line when the service stops answering and one when it is back, whatever the number of
 * failed attempts in between, and gives the wait before the next attempt (doubling, at most 5 s).
 * Until the service has answered once, the line also says where the address came from and how to
 * give another: a wrong address looks exactly like a service that is down.
 */
class Reachability {
  readonly #io: ListenIo;
  readonly #base: string;
  readonly #from: ListenOptions['apiBaseFrom'];
  readonly #intervalMs: number;
  #failures = 0;
  #answeredOnce = false;

  constructor(io: ListenIo, base: string, from: ListenOptions['apiBaseFrom'], intervalMs: number) {
    this.#io = io;
    this.#base = base;
    this.#from = from;
    this.#intervalMs = intervalMs;
  }

  failed(why: string): number {
    if (this.#failures++ === 0) {
      const hint = this.#answeredOnce
        ? ''
        : ` Is the service running at ${this.#base} (${ORIGIN[this.#from]})? Give its address with --api-base <url> or PAYMENTS_API_BASE.`;
      this.#io.err(`${clock()}  the API at ${this.#base} is unreachable (${why}): retrying; events meanwhile will follow.${hint}`);
    }
    return Math.min(this.#intervalMs * 2 ** (this.#failures - 1), MAX_BACKOFF_MS);
  }

  answered(): void {
    if (this.#failures > 0) this.#io.err(`${clock()}  the API at ${this.#base} is back: catching up`);
    this.#failures = 0;
    this.#answeredOnce = true;
  }
}

/** Runs `call` until it answers: transient failures are retried with backoff, never given up on. */
async function untilAnswered<T>(reach: Reachability, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      const v = await call();
      reach.answered();
      return v;
    } catch (err) {
      if (!(err instanceof TransientApiError)) throw err;
      await sleep(reach.failed(err.message));
    }
  }
}

/** POSTs one event to the local URL as the service's webhook delivery does (same sender, headers and body), and prints its line. */
async function forward(e: ListedEvent, o: ListenOptions, secret: string, io: ListenIo): Promise<void> {
  // The event object exactly as listed: the body of a real delivery (GET /v1/events/:id's object).
  const body = JSON.stringify(e);
  const result = await send(
    { url: o.forwardTo, eventId: e.id, deliveryId: newId('wd'), body, signature: signatureHeader([secret], body, nowUnix()) },
    FORWARD_TIMEOUT_MS,
    'any', // a local target: loopback and http allowed, as WEBHOOK_ALLOW_INSECURE_TARGETS allows them
  );
  const outcome = result.statusCode !== null ? String(result.statusCode) : `error: ${result.error}`;
  io.out(`${clock()}  ${e.type.padEnd(28)} ${e.id}  ${outcome} (${result.durationMs} ms)`);
}

/**
 * Follows and forwards until `signal` aborts (then answers 0) or the key is refused (then prints
 * one line and answers 1). The service being away is never an end: listen waits and catches up.
 */
export async function listen(o: ListenOptions, io: ListenIo, signal?: AbortSignal): Promise<number> {
  const secret = localSigningSecret(o.apiKey);
  const api = new ApiClient(o.apiBase, o.apiKey);
  const reach = new Reachability(io, api.base, o.apiBaseFrom, o.intervalMs);
  io.out(`Your local webhook signing secret is ${secret} (the same on every run with this API key)`);
  try {
    const catalogue = await untilAnswered(reach, () => api.get<ApiList<{ type: string }>>('/v1/event-types', {}, true));
    const known = new Set(catalogue.data.map((t) => t.type));
    const unknown = o.events?.filter((t) => !known.has(t)) ?? [];
    if (unknown.length > 0) {
      io.err(`error: unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
      return 1;
    }
    const wanted = o.events ? new Set(o.events) : null;
    const readPage = (endingBefore: string) => api.get<ApiList<ListedEvent>>('/v1/events', { limit: '100', ending_before: endingBefore });

    let follower: EventFollower;
    if (o.since !== null) {
      follower = new EventFollower(o.since * 1000);
    } else {
      // From now on: what the service already holds is read once and marked seen, not forwarded.
      const newest = await untilAnswered(reach, () => api.get<ApiList<ListedEvent>>('/v1/events', { limit: '1' }, true));
      follower = EventFollower.fromNewest(newest.data[0]?.created ?? null);
      await untilAnswered(reach, () => follower.poll(readPage, () => {}));
    }
    io.out(`Ready: forwarding ${wanted ? [...wanted].join(', ') : 'all'} test events from ${api.base} to ${o.forwardTo} (^C to quit)`);

    const onEvent = (e: ListedEvent) => (wanted && !wanted.has(e.type) ? undefined : forward(e, o, secret, io));
    while (!signal?.aborted) {
      let wait = o.intervalMs;
      try {
        await follower.poll(readPage, onEvent);
        reach.answered();
      } catch (err) {
        if (!(err instanceof TransientApiError)) throw err;
        wait = reach.failed(err.message);
      }
      await sleep(wait, undefined, { signal }).catch(() => {});
    }
    return 0;
  } catch (err) {
    if (err instanceof FatalApiError) {
      io.err(`error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
