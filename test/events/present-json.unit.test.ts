import { describe, expect, it } from 'vitest';
import { presentEvent, presentEventJson, type ApiObject, type StoredEvent } from '../../src/events/presenter.ts';

// A webhook body is spliced from the stored text of the event's data (insertEvents writes
// JSON.stringify of it into a json column, which keeps the text): it must be the very bytes of
// JSON.stringify(presentEvent(row)), which the signature covers.
const objects: ApiObject[] = [
  { id: 'cus_1', object: 'customer', livemode: false },
  {
    id: 'cs_2',
    object: 'checkout.session',
    livemode: true,
    // Escapes, non-ASCII, an emoji, a lone surrogate, numbers JSON writes in exponent form, nesting, nulls.
    ...({ name: 'Zoë "Ada" \\ O\'Brien\n\t\u0001', emoji: '💳', lone: '\ud800x', big: 1e21, small: 1e-7, neg: -0, amount: 1099, metadata: { a: [1, null, { b: true }] }, none: null } as object),
  } as ApiObject,
];

describe('presentEventJson', () => {
  for (const [i, object] of objects.entries()) {
    it(`is JSON.stringify(presentEvent(row)) byte for byte (${i})`, () => {
      const row: StoredEvent = { id: 'evt_0ABC', livemode: object.livemode, type: 'payment.succeeded', api_version: '2026-11-01', data: { object }, created_at: new Date(1_790_000_000_123) };
      const stored = JSON.stringify(row.data);
      expect(presentEventJson(row, stored)).toBe(JSON.stringify(presentEvent(row)));
      // What Postgres gives back is the stored text; read and written again it is the same text.
      expect(presentEventJson(row, stored)).toBe(JSON.stringify(presentEvent({ ...row, data: JSON.parse(stored) as StoredEvent['data'] })));
    });
  }
});
