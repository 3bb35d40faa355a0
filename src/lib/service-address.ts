/**
 * Where the commands (listen, users:create) find the service: one rule, shared by the service's
 * configuration and the command line. PAYMENTS_API_BASE when set (the address this machine reaches
 * the service by), else PUBLIC_BASE_URL (the service's own public address), else
 * http://localhost:$PORT (3000 by default), as `npm start` listens. Set but empty counts as unset.
 */
export interface AddressEnv {
  PAYMENTS_API_BASE?: string | undefined;
  PUBLIC_BASE_URL?: string | undefined;
  PORT?: string | undefined;
}

export const DEFAULT_PORT = 3000;

export function serviceAddress(env: AddressEnv): { url: string; from: 'PAYMENTS_API_BASE' | 'PUBLIC_BASE_URL' | 'PORT' | 'default' } {
  const set = (v: string | undefined) => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);
  const trim = (u: string) => u.replace(/\/+$/, '');
  const base = set(env.PAYMENTS_API_BASE);
  if (base) return { url: trim(base), from: 'PAYMENTS_API_BASE' };
  const pub = set(env.PUBLIC_BASE_URL);
  if (pub) return { url: trim(pub), from: 'PUBLIC_BASE_URL' };
  const port = set(env.PORT);
  return { url: `http://localhost:${port ?? DEFAULT_PORT}`, from: port ? 'PORT' : 'default' };
}
