import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Validates values against schemas of an OpenAPI 3.1 document with ajv's JSON Schema 2020-12
 * dialect (the dialect of OpenAPI 3.1 schemas). `validate(schema, value)` answers the problems,
 * empty when the value matches; `$ref`s into `#/components/...` resolve in the document.
 */
export function documentValidator(doc: Record<string, any>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  // OpenAPI's own schema keywords, which JSON Schema does not know.
  for (const keyword of ['example', 'discriminator', 'xml', 'externalDocs']) ajv.addKeyword(keyword);
  ajv.addSchema({ ...doc, $id: 'openapi.json' }, 'openapi.json');
  const compiled = new Map<string, ReturnType<Ajv2020['compile']>>();
  return (schema: Record<string, any>, value: unknown): string[] => {
    const key = JSON.stringify(schema);
    let check = compiled.get(key);
    if (!check) {
      // A $ref of the document resolves against it.
      const rebased = JSON.parse(key.replaceAll('"#/components/', '"openapi.json#/components/'));
      check = ajv.compile(rebased);
      compiled.set(key, check);
    }
    if (check(value)) return [];
    return (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  };
}
