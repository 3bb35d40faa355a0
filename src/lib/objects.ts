import { z } from 'zod';
import type { IdPrefix } from './ids.ts';

/**
 * The pieces of the API's response objects, as zod schemas. Each presenter declares the object it
 * returns with them (`CustomerObject` beside `presentCustomer`) and returns that schema's type, so a
 * field is added to the API and to its OpenAPI document (src/openapi/) in one place. The schemas
 * are never used to parse: presenters are trusted code, the schemas describe them.
 */

/** `cus_01m89emrkt0006k689spej1tdy0e8`: what an id looks like in examples. */
const exampleId = (prefix: string) => `${prefix}_01m89emrkt0006k689spej1tdy0e8`;

/** The object's own id. */
export const objectId = (prefix: IdPrefix, what: string) =>
  z.string().meta({ description: `Unique identifier of the ${what}, prefix \`${prefix}_\`.`, example: exampleId(prefix) });

/** The id of another object, or null. */
export const refId = (prefix: IdPrefix, description: string) => z.string().nullable().meta({ description, example: exampleId(prefix) });

/** The `object` field: the type's name, a constant that tells resources apart (in webhook payloads too). */
export const objectName = <const N extends string>(name: N) => z.literal(name).meta({ description: `Always \`${name}\`.` });

export const livemode = () =>
  z.boolean().meta({ description: 'True for an object of live mode (made with an `sk_live_` key), false for test mode. Test and live data never mix.' });

/** A Unix timestamp in seconds. */
export const unixTime = (description: string) => z.number().int().meta({ description: `${description} Unix time in seconds.`, example: 1795233990 });

export const nullableUnixTime = (description: string) =>
  z.number().int().nullable().meta({ description: `${description} Unix time in seconds; null until then.`, example: 1795233990 });

export const created = () => unixTime('When the object was created.');
export const updated = () => unixTime('When the object last changed.');

/** An amount in the smallest currency unit (cents for usd, yen for jpy). */
export const amountCents = (description: string) =>
  z.number().int().meta({ description: `${description} In the smallest currency unit (cents for usd).`, example: 2500 });

export const currencyCode = () => z.string().meta({ description: 'Three-letter ISO 4217 currency code, lowercase.', example: 'usd' });

/** Stored metadata: the pairs the merchant set (null and "" on write remove a key, so values are strings). */
export const metadataObject = () =>
  z.record(z.string(), z.string()).meta({ description: 'Up to 20 key/value pairs set by the merchant; returned unchanged in webhook payloads.' });

/** The id a schema was registered with (`.meta({ id })`). */
export function schemaId(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error('a listed object needs an id: .meta({ id })');
  return id;
}

/** The list envelope of `item` (src/lib/pagination.ts, `toList`). */
export function listOf<T extends z.ZodType>(item: T, description?: string) {
  const id = schemaId(item);
  return z
    .strictObject({
      object: objectName('list'),
      url: z.string().meta({ description: 'The path this list was read from.', example: '/v1/customers' }),
      has_more: z.boolean().meta({ description: 'True when another page follows the last object: call again with `starting_after` set to its id.' }),
      data: z.array(item).meta({ description: 'The objects of this page, newest first.' }),
    })
    .meta({ id: `${id}_list`, description: description ?? `A page of \`${id}\` objects, newest first.` });
}

/** What a DELETE answers: `{id, object, deleted: true}`. */
export function deletedObject<const N extends string>(name: N, prefix: IdPrefix) {
  return z
    .strictObject({
      id: objectId(prefix, `deleted ${name.replaceAll('_', ' ')}`),
      object: objectName(name),
      deleted: z.literal(true).meta({ description: 'Always true.' }),
    })
    .meta({ id: `deleted_${name}`, description: `The answer of a DELETE: the ${name.replaceAll('_', ' ')} is gone.` });
}

/** The body of a DELETE answer. */
export const deleted = <const N extends string>(object: N, id: string) => ({ id, object, deleted: true as const });
