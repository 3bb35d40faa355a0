import { z } from 'zod';
import { ApiError } from '../lib/errors.ts';

/**
 * Restricted API keys (issue 25, point 3), like Stripe's: a key is full (permissions null, every
 * key made before) or restricted, with none, read or write per resource. Every /v1 request of a
 * restricted key is checked in `authenticate` (middleware.ts) by the path's resource and the
 * method: GET and HEAD read, anything else writes. Pure.
 */
export const KEY_RESOURCES = {
  account: ['/account'],
  api_keys: ['/api-keys'],
  audit_events: ['/audit-events'],
  checkout_sessions: ['/checkout/sessions'],
  customers: ['/customers'],
  disputes: ['/disputes'],
  emails: ['/emails'],
  events: ['/events', '/event-types'],
  fraud: ['/fraud'],
  installment_plans: ['/installment-plans'],
  invoices: ['/invoices'],
  payment_links: ['/payment-links'],
  payments: ['/payments'],
  refunds: ['/refunds'],
  reports: ['/reports'],
  test_helpers: ['/test-helpers'],
  webhook_endpoints: ['/webhook-endpoints'],
} as const satisfies Record<string, readonly string[]>;
export type KeyResource = keyof typeof KEY_RESOURCES;
export const RESOURCE_NAMES = Object.keys(KEY_RESOURCES) as [KeyResource, ...KeyResource[]];

export const ACCESS = ['none', 'read', 'write'] as const;
export type Access = (typeof ACCESS)[number];
export type KeyPermissions = Partial<Record<KeyResource, Access>>;

/**
 * A restricted key never manages keys beyond reading them: with `api_keys: write` it could make
 * itself a full key. Audit events and reports (issue 27) are read only for every key.
 */
const MOST: Partial<Record<KeyResource, Access>> = { api_keys: 'read', audit_events: 'read', reports: 'read' };

/** The `permissions` of a create: a map of resources, or "read_only" (read on every resource). */
export const PermissionsInput = z
  .union([
    z.literal('read_only'),
    z.strictObject(Object.fromEntries(RESOURCE_NAMES.map((r) => [r, z.enum(ACCESS).optional()])) as Record<KeyResource, z.ZodOptional<z.ZodEnum<{ none: 'none'; read: 'read'; write: 'write' }>>>),
  ])
  .optional()
  .meta({
    description:
      'Omit for a full key. `"read_only"`, or per resource `"none"`, `"read"` or `"write"` (a resource not named is none): a restricted key. `api_keys`, `audit_events` and `reports` are at most `"read"`.',
    example: { customers: 'write', payments: 'read' },
  });

const rank = (a: Access) => ACCESS.indexOf(a);

/** What the create's input stores: null (full), or every resource named with its access. */
export function permissionsOf(input: z.infer<typeof PermissionsInput>): KeyPermissions | null {
  if (input === undefined) return null;
  const out: KeyPermissions = {};
  for (const r of RESOURCE_NAMES) {
    const asked: Access = input === 'read_only' ? 'read' : (input[r] ?? 'none');
    const most = MOST[r] ?? 'write';
    if (input !== 'read_only' && rank(asked) > rank(most)) {
      throw new ApiError('parameter_invalid', `A restricted key can have at most "${most}" on ${r}.`, `permissions[${r}]`);
    }
    out[r] = rank(asked) > rank(most) ? most : asked;
  }
  return out;
}

/**
 * Search and exports (issue 27) read another resource's records: `/search/payments`,
 * `/exports/payments` and its export runs (`/exports/payments/runs[/{id}]`) need `payments.read`,
 * as listing them does: making an export run (a POST) reads records and changes none.
 */
const READ_VIEWS: Record<string, KeyResource> = {
  customers: 'customers',
  payments: 'payments',
  invoices: 'invoices',
  'checkout-sessions': 'checkout_sessions',
  refunds: 'refunds',
  disputes: 'disputes',
  'installment-parts': 'installment_plans',
};

/** The resource a /v1 path (under /v1) belongs to, or null. */
export function resourceOfPath(path: string): KeyResource | null {
  const view = /^\/(?:search\/([^/]+)|exports\/([^/]+)(?:\/runs(?:\/[^/]+)?)?)$/.exec(path);
  if (view) {
    const name = view[1] ?? view[2]!;
    return Object.hasOwn(READ_VIEWS, name) ? READ_VIEWS[name]! : null;
  }
  for (const r of RESOURCE_NAMES) {
    if (KEY_RESOURCES[r].some((p) => path === p || path.startsWith(`${p}/`))) return r;
  }
  return null;
}

const EXPORT_RUNS = /^\/exports\/[^/]+\/runs$/;

/** What a request needs: GET and HEAD read, anything else writes, but for making an export run (it reads). */
export const accessNeeded = (method: string, path: string): Access => (method === 'GET' || method === 'HEAD' || EXPORT_RUNS.test(path) ? 'read' : 'write');

/** Refuses a restricted key's request outside its permissions: 403 naming the permission needed. */
export function checkScope(permissions: KeyPermissions, method: string, path: string): void {
  const resource = resourceOfPath(path);
  const needed = accessNeeded(method, path);
  const has = resource ? (permissions[resource] ?? 'none') : 'none';
  if (rank(has) >= rank(needed)) return;
  const name = `${resource ?? path.split('/')[1] ?? 'this resource'}.${needed}`;
  throw new ApiError('forbidden', `This restricted API key lacks the permission ${name} (it has ${resource ? `${has} on ${resource}` : 'none here'}). Use a key with ${name}, or a full key.`);
}
