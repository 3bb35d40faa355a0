/**
 * Dashboard roles and what each may do (issue 25; DESIGN 13). Checked on the server for every page
 * and action: a hidden button is not a check. Pure: the dashboard, the API's user routes and the
 * components that email "owners and administrators" read the same table.
 */
export const ROLES = ['owner', 'administrator', 'developer', 'analyst', 'support'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);

/**
 * Every permission a dashboard page or action asks for. Reading records is `read` (every role);
 * the rest are changes. Issue 25 owns this table; issues 26 and 27 add their permissions here.
 */
export const PERMISSIONS = {
  /** Every record of the account, read only. */
  read: ['owner', 'administrator', 'developer', 'analyst', 'support'],
  /** The developers' pages, read only: events, webhook endpoints, API keys (support sees no keys or endpoints). */
  'developers.read': ['owner', 'administrator', 'developer', 'analyst'],
  /** CSV exports and report downloads (issue 27). */
  export: ['owner', 'administrator', 'developer', 'analyst'],
  /** Customers: create, edit, delete; portal links. */
  'customers.write': ['owner', 'administrator', 'developer', 'support'],
  /** Payment links, checkout sessions (create, expire), invoices. */
  'payments.write': ['owner', 'administrator', 'developer', 'support'],
  /** Refunds (support: up to the owner's limit, team settings). */
  'refunds.create': ['owner', 'administrator', 'support'],
  /** Fraud rules, block lists, and the decision on a payment held for review (issue 27). */
  'fraud.manage': ['owner', 'administrator'],
  /** Dispute evidence, submit, accept. */
  'disputes.manage': ['owner', 'administrator'],
  /** API keys: create, roll, revoke, restrict. */
  'keys.manage': ['owner', 'administrator', 'developer'],
  /** Webhook endpoints: create, update, delete, rotate, resend, retry, test events. */
  'webhooks.manage': ['owner', 'administrator', 'developer'],
  /** Branding and account settings (live mode only: issue 21). */
  'settings.manage': ['owner', 'administrator'],
  /** Invite and remove users, change roles (an administrator never changes an owner), require two-factor, the support refund limit. */
  'team.manage': ['owner', 'administrator'],
  /** The support role's refund limit (team settings): the owner's alone. */
  'refunds.limit': ['owner'],
  /** The audit log. */
  'audit.read': ['owner', 'administrator'],
} as const satisfies Record<string, readonly Role[]>;
export type Permission = keyof typeof PERMISSIONS;

export const can = (role: Role, permission: Permission): boolean => (PERMISSIONS[permission] as readonly Role[]).includes(role);

/** The roles that hear about the account's operations (an endpoint disabled, a review waiting): owners and administrators. */
export const OPERATOR_ROLES: readonly Role[] = ['owner', 'administrator'];
