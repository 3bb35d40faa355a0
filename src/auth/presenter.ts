import { unix } from '../lib/time.ts';
import type { ApiKeyRow } from './store.ts';

/** The api_key object: never the secret (only its last four characters). */
export function presentApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    object: 'api_key' as const,
    livemode: row.livemode,
    last4: row.last4,
    created: unix(row.created_at),
    last_used: row.last_used_at ? unix(row.last_used_at) : null,
    expires_at: row.expires_at ? unix(row.expires_at) : null,
    revoked_at: row.revoked_at ? unix(row.revoked_at) : null,
  };
}
export type ApiKey = ReturnType<typeof presentApiKey>;

/** The answer of a create or a roll: the one time the secret is shown. */
export const presentNewApiKey = (row: ApiKeyRow, secret: string) => ({ ...presentApiKey(row), secret });
