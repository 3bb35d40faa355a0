import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/catalogue.ts';
import { ERROR_CODES } from '../../src/lib/errors.ts';
import { buildDocument } from '../../src/openapi/document.ts';
import { OPERATIONS } from '../../src/openapi/operations.ts';
import { sampleObject } from '../../src/test-events/samples.ts';
import { documentValidator } from './validate.ts';

const doc = buildDocument({ serverUrl: 'https://pay.tearoom.test' });
const METHODS = ['get', 'post', 'patch', 'delete', 'put'] as const;

describe('the OpenAPI document', () => {
  it('when checked against the OpenAPI 3.1 JSON Schema (@seriousme/openapi-schema-validator), then it is valid', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("when linted with Redocly's recommended rules (@redocly/openapi-core), then there is no error and no warning", async () => {
    // No contact or license is named: the project publishes neither (a document must not claim one).
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-contact': 'off', 'info-license': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('when its operations are listed, then each has an id, a summary, a tag, a 200 answer and the error answers', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toBeTruthy();
        expect(op.summary, where).toBeTruthy();
        expect(op.tags, where).toHaveLength(1);
        // A CSV export (issue 27) answers text/csv; every other operation JSON.
        expect((op.responses['200'].content['application/json'] ?? op.responses['200'].content['text/csv']).schema, where).toBeTruthy();
        expect(op.responses['400'], where).toEqual({ $ref: '#/components/responses/error_400' });
        expect(op.responses.default, where).toEqual({ $ref: '#/components/responses/error_5xx' });
        if (path.includes('{')) expect(op.responses['404'], where).toBeTruthy();
        if (path !== '/v1/openapi.json') expect(op.responses['401'], where).toBeTruthy();
      }
    }
  });

  it('when a POST makes a retry safe, then it takes Idempotency-Key; the API key calls and portal links, which refuse it, do not', () => {
    for (const op of OPERATIONS.filter((o) => o.method === 'post')) {
      const params = (doc.paths[op.path].post.parameters ?? []) as Array<{ $ref?: string }>;
      const takesKey = params.some((p) => p.$ref === '#/components/parameters/IdempotencyKey');
      // Their answers hold a secret (a key, a one-time sign-in link) that a stored replay would keep.
      expect(takesKey, `POST ${op.path}`).toBe(!op.path.startsWith('/v1/api-keys') && !op.path.endsWith('/portal-sessions'));
    }
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ in: 'header', name: 'Idempotency-Key' });
  });

  it('when the error shape is read, then its codes are those of src/lib/errors.ts, and the security scheme is the bearer key', () => {
    const error = doc.components.schemas.error.properties.error;
    expect(error.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
    expect(new Set(error.properties.type.enum)).toEqual(new Set(Object.values(ERROR_CODES).map(([, type]) => type)));
    expect(error.required).toEqual(['type', 'code', 'message']);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/v1/openapi.json'].get.security).toEqual([]);
    expect(doc.servers).toEqual([{ url: 'https://pay.tearoom.test', description: 'This service' }]);
  });

  it('when a list is documented, then its query has limit (an integer, 1 to 100, 10 by default) and both cursors', () => {
    // A list answers the list envelope (`object: "list"`); a query that is not a list's (a report's range) has no cursors.
    const isList = (o: (typeof OPERATIONS)[number]) => (o.response as { shape?: { object?: { value?: unknown } } }).shape?.object?.value === 'list';
    const lists = OPERATIONS.filter((o) => o.query && !o.csv && isList(o));
    expect(OPERATIONS.filter((o) => o.query && !o.csv && !isList(o)).map((o) => o.path)).toEqual(['/v1/reports/summary']);
    expect(lists.length).toBeGreaterThan(10);
    for (const op of lists) {
      const params = doc.paths[op.path].get.parameters as Array<{ name: string; in: string; schema: Record<string, unknown> }>;
      const limit = params.find((p) => p.name === 'limit');
      expect(limit?.schema, op.path).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
      expect(params.map((p) => p.name), op.path).toEqual(expect.arrayContaining(['starting_after', 'ending_before']));
    }
  });

  it('when the webhooks are listed, then there is one per event type, carrying the resource of its type, with its signature header', () => {
    expect(Object.keys(doc.webhooks)).toEqual(EVENT_TYPES.map((t) => t.type));
    for (const t of EVENT_TYPES) {
      const post = doc.webhooks[t.type].post;
      // A named component per type (issue 26): the schema GET /v1/event-types publishes as JSON Schema.
      const ref = post.requestBody.content['application/json'].schema;
      expect(ref).toEqual({ $ref: `#/components/schemas/event.${t.type}` });
      const body = doc.components.schemas[`event.${t.type}`];
      expect(body.properties.type.const).toBe(t.type);
      expect(body.properties.data.properties.object).toEqual({ $ref: `#/components/schemas/${t.object}` });
      expect(post.parameters.map((p: { name: string }) => p.name)).toContain('Service-Signature');
    }
  });

  it("when each event type's sample (the test events' objects, made by the real presenters) is checked, then it matches its webhook's payload", () => {
    const validate = documentValidator(doc);
    const now = new Date();
    for (const t of EVENT_TYPES) {
      const event = {
        id: 'evt_01m89emrkt0006k689spej1tdy0e8',
        object: 'event',
        livemode: false,
        type: t.type,
        api_version: doc.info.version,
        data: { object: sampleObject(t.type, false, { checkoutUrl: 'http://x/checkout', invoiceUrl: 'http://x/invoices' }, now) },
        created: 1795233990,
      };
      expect(validate(doc.webhooks[t.type].post.requestBody.content['application/json'].schema, event), t.type).toEqual([]);
      expect(validate({ $ref: '#/components/schemas/event' }, event), t.type).toEqual([]);
    }
  });

  it('when an object has a field its presenter does not fill, then the validator says so (it checks, it does not only pass)', () => {
    const validate = documentValidator(doc);
    expect(validate({ $ref: '#/components/schemas/deleted_customer' }, { id: 'cus_1', object: 'customer', deleted: true })).toEqual([]);
    expect(validate({ $ref: '#/components/schemas/deleted_customer' }, { id: 'cus_1', object: 'customer', deleted: true, extra: 1 })).not.toEqual([]);
    expect(validate({ $ref: '#/components/schemas/deleted_customer' }, { id: 'cus_1', object: 'customer' })).not.toEqual([]);
  });
});
