import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clientSchemaSource, SCHEMA_FILE } from '../../scripts/generate-client.ts';

describe('the typed client', () => {
  it('when its types are generated afresh from the OpenAPI document, then they are the checked-in client/src/schema.ts (else: npm run client:generate)', async () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await clientSchemaSource());
  });
});
