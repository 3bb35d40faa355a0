import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { EVENT_TYPES } from '../events/catalogue.ts';
import { API_VERSION } from '../events/presenter.ts';
import { ERROR_CODES, ErrorObject } from '../lib/errors.ts';
import { DeliveryHeaders } from '../webhooks/presenter.ts';
import { eventOfType } from './events.ts';
import { TAGS, type Operation } from './operation.ts';
import { OPERATIONS } from './operations.ts';

/**
 * The OpenAPI 3.1 document of the API, made from the zod schemas the service validates requests
 * with (each component's schema.ts) and presents its objects with (each presenter.ts), by
 * zod-openapi. Nothing here is a second copy of a field: what is written here is the operations'
 * summaries and the conventions every operation shares.
 */

type JsonObject = Record<string, any>;

const HTTP_TEXT: Record<number, string> = {
  400: 'The request is invalid',
  401: 'No valid API key',
  403: 'Not allowed with this key',
  404: 'No such object (or one of another account or mode)',
  409: 'A conflict with a request still running',
  413: 'The body is larger than 1 MB',
  415: 'The body is not JSON',
};

const codesOf = (match: (status: number) => boolean) =>
  Object.entries(ERROR_CODES)
    .filter(([, [status]]) => match(status))
    .map(([code, [status, type]]) => `\`${code}\` (${status}, ${type})`)
    .join(', ');

const requestIdHeader = z.object({
  'Request-Id': z.string().meta({ description: 'The id of this request (`req_…`): quote it when reporting a problem.', example: 'req_8yqRCk0cZfVXa0mP' }),
});

const replayedHeader = z.object({
  ...requestIdHeader.shape,
  'Idempotent-Replayed': z
    .literal('true')
    .optional()
    .meta({ description: 'Present on an answer replayed for a retry with the same `Idempotency-Key`.' }),
});

/** One response component per error status, each listing the codes it may carry (src/lib/errors.ts). */
function errorResponse(status: number | 'default'): ZodOpenApiResponseObject {
  const match = status === 'default' ? (s: number) => s >= 500 : (s: number) => s === status;
  const head = status === 'default' ? 'A failure of the service; safe to retry' : HTTP_TEXT[status];
  return {
    id: status === 'default' ? 'error_5xx' : `error_${status}`,
    description: `${head}. Codes: ${codesOf(match)}.`,
    headers: requestIdHeader,
    content: { 'application/json': { schema: ErrorObject } },
  };
}

const ERROR_RESPONSES = new Map<number | 'default', ZodOpenApiResponseObject>(
  ([400, 401, 403, 404, 409, 413, 415, 'default'] as const).map((s) => [s, errorResponse(s)]),
);

/** The error statuses an operation answers: those of every request, of its kind, and its own. */
export function errorStatuses(op: Operation): number[] {
  const statuses = new Set<number>([400, ...(op.errors ?? [])]);
  if (op.auth !== false) statuses.add(401);
  if (op.id) statuses.add(404);
  if (op.method === 'post' || op.method === 'patch') {
    statuses.add(413);
    statuses.add(415);
  }
  if (op.method === 'post' && op.idempotency !== false) statuses.add(409);
  return [...statuses].sort();
}

const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .meta({
    description:
      'Makes a retry safe: the first answer is kept for 24 hours per account, mode and key and replayed (with `Idempotent-Replayed: true`) for a retry with the same method, path and body; the same key with another request is `400 idempotency_key_reused`, and a retry while the first still runs `409 idempotency_key_in_progress`. A random UUID per intended operation is a good key.',
    example: '5f0c9b1e-6a2b-4c6e-9f1d-3b2a1c0d9e8f',
    param: { id: 'IdempotencyKey' },
  });

/** `/v1/customers/{id}` → the names in braces. */
const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

/** A request body is optional when `{}` is a valid one. */
const bodyRequired = (body: z.ZodObject) => !body.safeParse({}).success;

function operationObject(op: Operation): ZodOpenApiOperationObject {
  const params = pathParams(op.path);
  const path = params.length
    ? z.object(
        Object.fromEntries(
          params.map((name) => [
            name,
            z.string().meta({
              description: op.id ? `The id of the ${op.id[1]} (\`${op.id[0]}_…\`).` : name,
              example: op.id ? `${op.id[0]}_01m89emrkt0006k689spej1tdy0e8` : undefined,
            }),
          ]),
        ),
      )
    : undefined;
  const idempotent = op.method === 'post' && op.idempotency !== false;
  const hasBody = op.body && Object.keys(op.body.shape).length > 0;
  const responses: ZodOpenApiOperationObject['responses'] = {
    '200': {
      description: z.globalRegistry.get(op.response)?.description ?? 'OK',
      headers: op.method === 'post' ? replayedHeader : requestIdHeader,
      content: op.csv ? { 'text/csv': { schema: op.response } } : { 'application/json': { schema: op.response } },
    },
  };
  for (const status of errorStatuses(op)) responses[`${status}` as `4${string}`] = ERROR_RESPONSES.get(status)!;
  responses.default = ERROR_RESPONSES.get('default')!;
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(op.auth === false ? { security: [] } : {}),
    requestParams: {
      ...(path ? { path } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(idempotent ? { header: z.object({ 'Idempotency-Key': idempotencyKey }) } : {}),
    },
    ...(hasBody
      ? { requestBody: { required: bodyRequired(op.body!), content: { 'application/json': { schema: op.body! } } } }
      : {}),
    responses,
  };
}

function paths(): ZodOpenApiPathsObject {
  const out: ZodOpenApiPathsObject = {};
  for (const op of OPERATIONS) (out[op.path] ??= {})[op.method] = operationObject(op);
  return out;
}

function webhooks(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    EVENT_TYPES.map((t) => [
      t.type,
      {
        post: {
          operationId: `webhook.${t.type}`,
          summary: t.type,
          description: `${t.description} The service POSTs this event to each active endpoint of its mode subscribed to \`${t.type}\` (or \`*\`); \`data.object\` is the \`${t.object}\` as the API showed it then.`,
          tags: ['Webhook events'],
          security: [],
          requestParams: { header: DeliveryHeaders },
          requestBody: { required: true, content: { 'application/json': { schema: eventOfType(t.type) } } },
          responses: {
            '2XX': {
              description:
                'Any 2xx within 10 seconds acknowledges the delivery. Anything else (another status, a redirect, a timeout) fails the attempt: 7 attempts in all over about 10.5 hours.',
            },
          },
        },
      },
    ]),
  );
}

const INTRO = `A payment-collection API shaped like Stripe's: customers, payment links, hosted checkout
sessions, invoices, refunds, disputes, and signed webhook events.

**Authentication.** Every \`/v1\` request carries \`Authorization: Bearer <key>\`. The key decides the
account and the mode: \`sk_test_…\` keys see test data only, \`sk_live_…\` keys live data only.

**Objects.** Timestamps are integers, Unix time in seconds; amounts are integers in the smallest
currency unit; currency codes are lowercase ISO 4217. Every object has \`object\` (its type) and
\`livemode\`.

**Errors** all have the shape of the \`error\` schema, with a \`Request-Id\` header. An unknown body or
query field is \`400 parameter_unknown\` naming it; an unknown id, or one of another account or mode,
\`404 resource_missing\`.

**Lists** answer \`{object: "list", url, has_more, data}\`, newest first: \`limit\` 1 to 100 (10 by
default), \`starting_after\` the last id of a page for the next one, \`ending_before\` the first id for
the previous one. Filters combine with the cursors.

**Idempotency.** Send \`Idempotency-Key\` on a POST to make its retry safe (the header's description
below says how).

**PATCH** changes only the fields sent; \`null\` clears a nullable field; \`metadata\` keys are merged.

**Webhooks** (below) are signed: \`Service-Signature: t=<unix seconds>,v1=<hex>\`, the lowercase hex
HMAC-SHA256, keyed by the endpoint's whole \`whsec_…\` secret, of \`"<t>.<raw body>"\`.`;

export interface DocumentOptions {
  /** The service's public address (PUBLIC_BASE_URL): the document's server. */
  serverUrl: string;
}

/** Normalises what zod renders into what an OpenAPI reader expects. */
function override({ jsonSchema, zodSchema, io }: { jsonSchema: JsonObject; zodSchema: z.core.$ZodType; io: 'input' | 'output' }): void {
  // An integer query parameter is parsed from its string (lib/pagination.ts, queryInt): document the integer.
  const def = zodSchema._zod.def as { type: string; out?: z.ZodType };
  if (io === 'input' && def.type === 'pipe' && def.out?._zod.def.type === 'number') {
    const number = z.toJSONSchema(def.out, { io: 'input' }) as JsonObject;
    delete jsonSchema.pattern;
    jsonSchema.type = number.type;
    if (number.minimum !== undefined) jsonSchema.minimum = number.minimum;
    if (number.maximum !== undefined) jsonSchema.maximum = number.maximum;
  }
  // zod leaves out the default of a parsed parameter in input (it is the parsed value): it is that integer.
  if (io === 'input' && def.type === 'default' && jsonSchema.default === undefined) {
    const value = (zodSchema as z.ZodDefault)._zod.def.defaultValue;
    if (typeof value === 'number') jsonSchema.default = value;
  }
  // `.int()` adds the bounds of a safe integer: true of every JSON number the service writes, noise in a reference.
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}

/**
 * Fills what zod leaves without a description from the objects themselves: a request field from
 * the field of the same name on the object the operation answers (its example too), a list filter
 * likewise.
 */
function describeFromObjects(doc: JsonObject): void {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, JsonObject>;
  const resolve = (s: JsonObject | undefined): JsonObject | undefined => (s?.$ref ? schemas[String(s.$ref).split('/').pop()!] : s);
  for (const item of Object.values(doc.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      let answered = resolve(operation.responses?.['200']?.content?.['application/json']?.schema);
      const listed = answered?.properties?.object?.const === 'list' ? resolve(answered.properties.data?.items) : undefined;
      if (listed) answered = listed;
      const fields = (answered?.properties ?? {}) as Record<string, JsonObject>;
      const body = operation.requestBody?.content?.['application/json']?.schema as JsonObject | undefined;
      for (const [name, field] of Object.entries((body?.properties ?? {}) as Record<string, JsonObject>)) {
        const like = fields[name];
        if (!like) continue;
        const described = field.description || (field.anyOf as JsonObject[] | undefined)?.some((f) => f.description);
        if (!described && like.description) field.description = like.description;
        if (field.example === undefined && like.example !== undefined && field.type === like.type) field.example = like.example;
      }
      for (const param of (operation.parameters ?? []) as JsonObject[]) {
        if (param.in !== 'query' || param.description) continue;
        const field = fields[param.name];
        param.description = field ? `Only the objects whose \`${param.name}\` is this. ${field.description ?? ''}`.trim() : undefined;
      }
    }
  }
}

/** The document; built once per process and server address (it only depends on the code). */
const cache = new Map<string, JsonObject>();

export function buildDocument(opts: DocumentOptions): JsonObject {
  const cached = cache.get(opts.serverUrl);
  if (cached) return cached;
  const doc = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'payments-service API',
        version: API_VERSION,
        description: INTRO,
      },
      servers: [{ url: opts.serverUrl, description: 'This service' }],
      security: [{ bearerAuth: [] }],
      tags: [
        ...TAGS.map((t) => ({ name: t.name, description: t.description })),
        { name: 'Webhook events', description: 'What the service POSTs to webhook endpoints, one entry per event type.' },
      ],
      paths: paths(),
      webhooks: webhooks(),
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A secret API key: `sk_test_…` for test mode, `sk_live_…` for live mode. Create the first with `npm run keys:create`, more with `POST /v1/api-keys`.',
          },
        },
      },
    },
    { override },
  ) as JsonObject;
  describeFromObjects(doc);
  cache.set(opts.serverUrl, doc);
  return doc;
}
