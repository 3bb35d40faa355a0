import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPE_NAMES } from '../../src/events/catalogue.ts';
import { useTestServer } from '../helpers/server.ts';
import { createEndpoint } from './helpers.ts';
import { startReceiver, verifyWithStripe, type Receiver } from './receiver.ts';

// Issue 26, point 4: GET /v1/event-types publishes each type's JSON Schema, generated from the zod
// schema the OpenAPI document's `webhooks` entry references; real deliveries of every type (test
// events: each made by the presenter a real event of its type uses, signed and sent as any delivery)
// validate against it with ajv, a third-party validator.

const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver(() => 200);
});
afterAll(async () => {
  await rx.close();
});

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

describe('event schemas', () => {
  it('when every event type is delivered, then each delivery is valid against the schema GET /v1/event-types publishes for its type', async () => {
    const a = await t.account();
    const res = await t.request('GET', '/v1/event-types', { key: a.test });
    expect(res.status).toBe(200);
    const schemas = new Map<string, Record<string, unknown>>(res.body.data.map((x: { type: string; schema: Record<string, unknown> }) => [x.type, x.schema]));
    expect([...schemas.keys()]).toEqual(EVENT_TYPE_NAMES);

    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/all` });
    for (const type of EVENT_TYPE_NAMES) {
      const sent = await t.request('POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: a.test, body: { type } });
      expect(sent.status).toBe(200);
    }
    const got = await rx.waitFor(EVENT_TYPE_NAMES.length, 30_000, (r) => r.path === '/all');
    const seen = new Set<string>();
    for (const r of got) {
      const event = verifyWithStripe(r, ep.signing_secret);
      const check = ajv.compile(schemas.get(event.type)!);
      const body = JSON.parse(r.body) as Record<string, unknown>;
      expect(check(body) ? [] : check.errors, event.type).toEqual([]);
      seen.add(event.type);

      // The schema is strict enough to tell: another type's name, a field too many or missing, fail.
      expect(check({ ...body, type: event.type === 'payment.failed' ? 'payment.succeeded' : 'payment.failed' })).toBe(false);
      expect(check({ ...body, extra: 1 })).toBe(false);
      const { created: _c, ...withoutCreated } = body;
      expect(check(withoutCreated)).toBe(false);
    }
    expect([...seen].sort()).toEqual([...EVENT_TYPE_NAMES].sort());
  });

  it('when the OpenAPI document is read, then each webhooks entry references the component whose JSON Schema GET /v1/event-types publishes', async () => {
    const a = await t.account();
    const doc = (await t.request('GET', '/v1/openapi.json')).body;
    const types = (await t.request('GET', '/v1/event-types', { key: a.test })).body.data as Array<{ type: string; schema: { $defs: Record<string, Record<string, unknown>> } }>;
    for (const { type, schema } of types) {
      const ref = doc.webhooks[type].post.requestBody.content['application/json'].schema.$ref as string;
      expect(ref).toBe(`#/components/schemas/event.${type}`);
      const component = doc.components.schemas[`event.${type}`];
      expect(component.properties.type.const).toBe(type);
      // Same properties and required fields: one zod schema, two renderings.
      const published = schema.$defs[`event.${type}`]!;
      expect(Object.keys(component.properties)).toEqual(Object.keys(published.properties as object));
      expect(component.required).toEqual(published.required);
    }
  });
});
