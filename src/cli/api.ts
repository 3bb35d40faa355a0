/**
 * The few calls `listen` makes to the service: plain `fetch` over the public /v1 API with the key,
 * nothing else of the service. Every failure is sorted into what a retry can fix (the service is
 * restarting, a proxy answers 502, the network is away) and what it cannot (the key is refused).
 */

/** A list answer of the API, as far as listen reads it. */
export interface ApiList<T> {
  data: T[];
  has_more: boolean;
}

/** What a retry cannot fix: the key refused, the command itself wrong. */
export class FatalApiError extends Error {}

/** The API did not answer usefully this time: a retry may. */
export class TransientApiError extends Error {}

const REQUEST_TIMEOUT_MS = 10_000;
const USER_AGENT = 'payments-service-listen/1.0';

const describeCause = (err: unknown): string => {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  if (e.cause?.code) return e.cause.code;
  return e.cause?.message ?? e.message ?? String(err);
};

export class ApiClient {
  readonly base: string;
  readonly #key: string;

  constructor(base: string, key: string) {
    this.base = base.replace(/\/+$/, '');
    this.#key = key;
  }

  /**
   * GET `path` (with its query) and answer the parsed JSON of a 2xx. 401 and 403 are fatal (the key
   * is refused or revoked); other 4xx are fatal when `strict` (the first calls: a wrong --api-base
   * shows at once) and transient otherwise (a proxy in between answering 404 during a deploy).
   */
  async get<T>(path: string, query: Record<string, string | undefined> = {}, strict = false): Promise<T> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${this.#key}`, accept: 'application/json', 'user-agent': USER_AGENT },
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new TransientApiError(describeCause(err));
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch (err) {
      // A body cut short or a proxy's HTML page.
      if (res.ok || !strict || res.status >= 500) throw new TransientApiError(`HTTP ${res.status} with no JSON answer (${describeCause(err)})`);
      throw new FatalApiError(`${url.origin} answered HTTP ${res.status} with no JSON: is --api-base the service's address?`);
    }
    if (res.ok) return body as T;
    const e = (body as { error?: { code?: string; message?: string } }).error;
    const why = `HTTP ${res.status}${e?.code ? ` ${e.code}` : ''}${e?.message ? `: ${e.message}` : ''}`;
    if (res.status === 401 || res.status === 403) throw new FatalApiError(`the API refused the key (${why})`);
    if (strict && res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new FatalApiError(why);
    throw new TransientApiError(why);
  }
}
