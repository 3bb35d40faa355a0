// HTTP load with autocannon, and the CPU each party used per request.
import autocannon from 'autocannon';
import { processCpuSeconds, type BenchDb, type BenchSettings } from './base.ts';
import type { Service } from './service.ts';

export interface LoadSpec {
  url: string;
  path: string;
  method?: string;
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** An object is sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Replaces `[<id>]` in the body with a fresh random id per request (autocannon's feature). */
  idReplacement?: boolean;
  /** Called before each request; what it returns replaces that request's path and/or body. */
  next?: () => { path?: string; body?: string };
  /** Seconds of unreported load first (JIT, pools). Default: min(3, seconds). */
  warmupSeconds?: number;
  /** The service under load: its CPU time per request is then reported. */
  service?: Pick<Service, 'cpuSeconds'>;
  /** The service's database: the CPU its Postgres backends use per request is then reported. */
  db?: Pick<BenchDb, 'name' | 'sql'>;
}

export interface LoadResult {
  /** Mean requests per second over the run. */
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  total: number;
  statusCodes: Record<string, number>;
  /** CPU microseconds the service process used per answered request (when spec.service is given). */
  serviceCpuUs: number | undefined;
  /** CPU microseconds the Postgres backends of spec.db used per answered request. */
  pgCpuUs: number | undefined;
  /** CPU microseconds the load generator (autocannon, this process) used per answered request. */
  clientCpuUs: number;
}

async function cannon(spec: LoadSpec, seconds: number, connections: number): Promise<LoadResult> {
  const headers: Record<string, string> = { ...spec.headers };
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  let body: string | undefined;
  if (spec.body !== undefined) {
    body = typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body);
    headers['content-type'] ??= 'application/json';
  }
  const next = spec.next;
  const r = await autocannon({
    url: spec.url,
    connections,
    duration: seconds,
    idReplacement: spec.idReplacement ?? false,
    requests: [
      {
        method: spec.method ?? 'GET',
        path: spec.path,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(next ? { setupRequest: (req) => ({ ...req, ...next() }) } : {}),
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(v.count);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
    statusCodes,
    serviceCpuUs: undefined,
    pgCpuUs: undefined,
    clientCpuUs: Number.NaN,
  };
}

/** CPU seconds used so far by the Postgres backends connected to one database (Linux /proc). */
async function backendsCpu(db: Pick<BenchDb, 'name' | 'sql'>): Promise<Map<number, number>> {
  const rows = await db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`;
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = processCpuSeconds(pid);
    if (!Number.isNaN(cpu)) out.set(pid, cpu);
  }
  return out;
}

/** autocannon with settings.connections (50) for settings.seconds, after an unreported warm-up. */
export async function load(spec: LoadSpec, settings: BenchSettings): Promise<LoadResult> {
  const warm = spec.warmupSeconds ?? Math.min(3, settings.seconds);
  if (warm > 0) await cannon(spec, warm, settings.connections);
  const svc0 = spec.service?.cpuSeconds();
  const pg0 = spec.db ? await backendsCpu(spec.db) : undefined;
  const me0 = process.cpuUsage();
  const r = await cannon(spec, settings.seconds, settings.connections);
  const me = process.cpuUsage(me0);
  const per = (seconds: number) => (r.total > 0 ? (seconds * 1e6) / r.total : Number.NaN);
  r.clientCpuUs = per((me.user + me.system) / 1e6);
  if (svc0 !== undefined) r.serviceCpuUs = per(spec.service!.cpuSeconds() - svc0);
  if (pg0 !== undefined) {
    let used = 0;
    for (const [pid, cpu] of await backendsCpu(spec.db!)) used += cpu - (pg0.get(pid) ?? 0);
    r.pgCpuUs = per(used);
  }
  return r;
}
