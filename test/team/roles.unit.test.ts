import { describe, expect, it } from 'vitest';
import { can, isRole, OPERATOR_ROLES, PERMISSIONS, ROLES } from '../../src/team/roles.ts';

describe('roles', () => {
  it('when a permission is listed, then it names only known roles and the owner always has it', () => {
    for (const [permission, roles] of Object.entries(PERMISSIONS)) {
      for (const r of roles) expect(isRole(r), `${permission}: ${r}`).toBe(true);
      expect(roles, permission).toContain('owner');
    }
  });

  it('when the issue names a rule, then the table says the same', () => {
    expect(ROLES.filter((r) => can(r, 'read'))).toEqual([...ROLES]);
    expect(ROLES.filter((r) => can(r, 'export'))).toContain('analyst');
    expect(can('support', 'export')).toBe(false);
    expect(can('analyst', 'refunds.create')).toBe(false);
    expect(can('support', 'refunds.create')).toBe(true);
    expect(can('support', 'keys.manage') || can('support', 'webhooks.manage')).toBe(false);
    expect(OPERATOR_ROLES).toEqual(['owner', 'administrator']);
    expect(isRole('root')).toBe(false);
  });
});
