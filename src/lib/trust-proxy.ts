import { isIP } from 'node:net';

/** TRUST_PROXY (src/config.ts): what Express's `trust proxy` accepts, checked and converted. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
export function isTrustProxy(v: string): boolean {
  if (/^(true|false|\d+)?$/.test(v.trim())) return true;
  return v.split(',').every((part) => {
    const [ip, bits, ...rest] = part.trim().split('/');
    if (PROXY_NAMES.has(ip!) && bits === undefined) return true;
    const family = isIP(ip!);
    if (!family || rest.length) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
}

/** Express's `trust proxy` value for TRUST_PROXY. */
export function trustProxy(v: string): boolean | number | string {
  const t = v.trim();
  if (t === '' || t === 'false') return false;
  if (t === 'true') return true;
  return /^\d+$/.test(t) ? Number(t) : t;
}
