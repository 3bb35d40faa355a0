import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ExportRunRow } from './store.ts';

/** Where the signed download links of export runs are served (outside /v1: the link is the credential). */
export const EXPORT_FILES_PATH = '/files/export-runs';

type Signed = Pick<ExportRunRow, 'id' | 'account_id' | 'livemode' | 'link_key'>;

/**
 * The signature of a link: HMAC-SHA256, keyed by the run's own random key (migration 0041), over
 * the run, its account and mode, and the link's expiry. Only this service (which holds the key)
 * can make one; changing any part of the link breaks it; deleting the run revokes every link.
 */
function signature(run: Signed, expires: number): string {
  return createHmac('sha256', run.link_key).update(`${run.id}.${run.account_id}.${run.livemode ? 'live' : 'test'}.${expires}`).digest('hex');
}

/** A download link valid until `expires` (Unix seconds). */
export function signedLink(baseUrl: string, run: Signed, expires: number): string {
  return `${baseUrl}${EXPORT_FILES_PATH}/${run.id}?expires=${expires}&signature=${signature(run, expires)}`;
}

/** Whether a link's expiry and signature are this run's and the link has not expired at `nowSeconds`. */
export function linkValid(run: Signed, expires: number, sig: string, nowSeconds: number): boolean {
  if (!Number.isSafeInteger(expires) || expires < nowSeconds) return false;
  const want = Buffer.from(signature(run, expires), 'hex');
  const got = Buffer.from(/^[0-9a-f]{64}$/.test(sig) ? sig : '', 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}
