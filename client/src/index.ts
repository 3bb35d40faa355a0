import createClient, { type Client, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import { POSTS_WITHOUT_IDEMPOTENCY_KEY, type components, type paths, type webhooks } from './schema.ts';

// Every type of the document: `Customer`, `CheckoutSession`, `paths`, `components`, `webhooks`, …
export type * from './schema.ts';

/** Every object of the API by its name: `Schemas['customer']`. */
export type Schemas = components['schemas'];

type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** The paths that have an operation for `M`. */
export type PathsWith<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];

type Operation<P extends keyof paths, M extends HttpMethod> = paths[P] extends { [K in M]: infer O } ? O : never;

/** What a call of `M` on `P` takes: `params` (`path`, `query`, `header`) and `body`, as the document says. */
export type CallOptions<P extends keyof paths, M extends HttpMethod> = MaybeOptionalInit<paths[P], M>;

/** Optional when nothing in it is required. */
type Args<P extends keyof paths, M extends HttpMethod> = undefined extends CallOptions<P, M> ? [options?: CallOptions<P, M>] : [options: CallOptions<P, M>];

/** The body of the 200 answer of `M` on `P`. */
export type Answer<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: { 200: { content: { 'application/json': infer D } } } } ? D : never;

/** The list paths: their GET answers `{object: "list", has_more, data}`. */
export type ListPath = { [P in PathsWith<'get'>]: Answer<P, 'get'> extends { object: 'list'; has_more: boolean; data: unknown[] } ? P : never }[PathsWith<'get'>];

/** An object of a list. */
export type ListItem<P extends ListPath> = Answer<P, 'get'> extends { data: Array<infer I> } ? I : never;

/** The payload of a webhook delivery of `T`: `WebhookEvent<'payment.succeeded'>` carries a payment. */
export type WebhookEvent<T extends keyof webhooks> = webhooks[T] extends { post: { requestBody: { content: { 'application/json': infer E } } } } ? E : never;

type ErrorBody = Schemas['error']['error'];

/**
 * An error answer of the API, typed: `type`, `code`, `param` and `message` as the API sent them,
 * the HTTP status and the `Request-Id` to quote when reporting it. An answer that is not the API's
 * error shape (a proxy's page, say) has type `api_error` and code `invalid_response`.
 */
export class PaymentsApiError extends Error {
  override readonly name = 'PaymentsApiError';
  readonly status: number;
  readonly type: ErrorBody['type'];
  readonly code: ErrorBody['code'] | 'invalid_response';
  readonly param: string | undefined;
  readonly requestId: string | null;

  constructor(status: number, body: unknown, requestId: string | null) {
    const error = isErrorBody(body) ? body.error : undefined;
    super(error?.message ?? `The API answered ${status} without an error body.`);
    this.status = status;
    this.type = error?.type ?? 'api_error';
    this.code = error?.code ?? 'invalid_response';
    this.param = error?.param;
    this.requestId = requestId;
  }
}

function isErrorBody(body: unknown): body is { error: ErrorBody } {
  const error = (body as { error?: unknown } | null)?.error as Partial<ErrorBody> | undefined;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
}

export interface PaymentsClientOptions {
  /** A secret key, `sk_test_…` or `sk_live_…`. */
  apiKey: string;
  /** Where the service is, e.g. `https://payments.example.com` (without `/v1`). */
  baseUrl: string;
  /** Retries of a failed attempt (network error, 5xx, 429, a 409 while the same key still runs): 2 by default. */
  maxRetries?: number;
  /** The first retry waits this long, each next one twice as long (jittered; a `Retry-After` header wins): 500 ms by default. */
  retryDelayMs?: number;
  /** The fetch to use (tests, proxies): globalThis.fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

const NO_KEY = new Set(POSTS_WITHOUT_IDEMPOTENCY_KEY);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether an answer is worth another attempt with the same request (and the same Idempotency-Key). */
async function retryable(res: Response): Promise<boolean> {
  if (res.status >= 500 || res.status === 429) return true;
  if (res.status !== 409) return false;
  const body: unknown = await res
    .clone()
    .json()
    .catch(() => null);
  return isErrorBody(body) && body.error.code === 'idempotency_key_in_progress';
}

/**
 * The transport under openapi-fetch: a GET, or a POST that carries an Idempotency-Key, is sent
 * again after a network error or a retryable answer, with the very same key, so that the service
 * replays the first answer instead of acting twice. Other requests are sent once.
 */
function retryingFetch(opts: Required<Pick<PaymentsClientOptions, 'maxRetries' | 'retryDelayMs'>> & Pick<PaymentsClientOptions, 'fetch'>) {
  const send = opts.fetch ?? ((request: Request) => globalThis.fetch(request));
  return async (request: Request): Promise<Response> => {
    const again = request.method === 'GET' || (request.method === 'POST' && request.headers.has('Idempotency-Key'));
    for (let attempt = 0; ; attempt++) {
      const last = !again || attempt >= opts.maxRetries;
      const wait = (res?: Response) => {
        const after = Number(res?.headers.get('Retry-After'));
        return sleep(after > 0 ? Math.min(after, 60) * 1000 : opts.retryDelayMs * 2 ** attempt * (0.75 + Math.random() / 2));
      };
      let res: Response;
      try {
        res = await send(last ? request : request.clone());
      } catch (err) {
        // fetch rejects with a TypeError when no answer came (connection refused or reset, DNS);
        // an abort or anything else is the caller's.
        if (last || !(err instanceof TypeError)) throw err;
        await wait();
        continue;
      }
      if (last || !(await retryable(res))) return res;
      await res.body?.cancel();
      await wait(res);
    }
  };
}

/** Adds a random Idempotency-Key to every POST that takes one and has none. */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key') && !NO_KEY.has(schemaPath)) {
      request.headers.set('Idempotency-Key', crypto.randomUUID());
    }
    return request;
  },
};

export interface PaymentsClient {
  /** GET: the answer's body, or a thrown PaymentsApiError. */
  get<P extends PathsWith<'get'>>(path: P, ...options: Args<P, 'get'>): Promise<Answer<P, 'get'>>;
  /** POST, with a random Idempotency-Key unless `params.header['Idempotency-Key']` gives one. */
  post<P extends PathsWith<'post'>>(path: P, ...options: Args<P, 'post'>): Promise<Answer<P, 'post'>>;
  patch<P extends PathsWith<'patch'>>(path: P, ...options: Args<P, 'patch'>): Promise<Answer<P, 'patch'>>;
  delete<P extends PathsWith<'delete'>>(path: P, ...options: Args<P, 'delete'>): Promise<Answer<P, 'delete'>>;
  /**
   * Every object of a list, page after page (`starting_after` the last id of each page, until
   * `has_more` is false), newest first; `params.query` gives the filters and `limit` the page size.
   */
  autoPaginate<P extends ListPath>(path: P, ...options: Args<P, 'get'>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** The openapi-fetch client underneath (`{data, error, response}` answers, no throwing), with the same keys and retries. */
  readonly raw: Client<paths>;
}

/**
 * A client of the payments-service API, typed by its OpenAPI document:
 *
 *     const api = createPaymentsClient({ apiKey: process.env.PAYMENTS_API_KEY!, baseUrl: 'https://payments.example.com' });
 *     const customer = await api.post('/v1/customers', { body: { email: 'ada@example.com' } });
 *     for await (const c of api.autoPaginate('/v1/customers', { params: { query: { limit: 100 } } })) console.log(c.email);
 */
export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch({ maxRetries: options.maxRetries ?? 2, retryDelayMs: options.retryDelayMs ?? 500, fetch: options.fetch }),
  });
  raw.use(idempotencyKeys);

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, init: unknown): Promise<any> => {
    const { data, error, response } = await (raw[method] as (p: string, i: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, init);
    if (!response.ok || error !== undefined) throw new PaymentsApiError(response.status, error, response.headers.get('Request-Id'));
    return data;
  };

  const client: PaymentsClient = {
    raw,
    get: (path, ...options) => call('GET', path, options[0]),
    post: (path, ...options) => call('POST', path, options[0]),
    patch: (path, ...options) => call('PATCH', path, options[0]),
    delete: (path, ...options) => call('DELETE', path, options[0]),
    async *autoPaginate(path, ...options) {
      const init = (options[0] ?? {}) as { params?: { query?: Record<string, unknown> } };
      if (init.params?.query?.ending_before !== undefined) throw new TypeError('autoPaginate pages forward: give starting_after, not ending_before.');
      let startingAfter = init.params?.query?.starting_after as string | undefined;
      for (;;) {
        const query = { ...init.params?.query, ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}) };
        const page = (await call('GET', path, { ...init, params: { ...init.params, query } })) as { has_more: boolean; data: Array<{ id?: string }> };
        for (const item of page.data) yield item as ListItem<typeof path>;
        const last = page.data.at(-1)?.id;
        if (!page.has_more || last === undefined) return;
        startingAfter = last;
      }
    },
  };
  return client;
}
