import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/dashboard/password.ts';

describe('dashboard passwords', () => {
  it('hashes with argon2id, a fresh salt each time, and verifies only the right password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('verifies with the parameters stored in the hash, and refuses a malformed hash', async () => {
    const h = await hashPassword('a long enough password');
    const weaker = h.replace('m=19456', 'm=8192');
    expect(await verifyPassword('a long enough password', weaker)).toBe(false);
    expect(await verifyPassword('a long enough password', 'not a hash')).toBe(false);
    expect(await verifyPassword('a long enough password', h.replace('$argon2id$', '$argon2i$'))).toBe(false);
  });

  it('asks for 12 to 200 characters', () => {
    expect(passwordProblem('short')).toMatch(/at least 12/);
    expect(passwordProblem('x'.repeat(201))).toMatch(/at most 200/);
    expect(passwordProblem('twelve chars')).toBeNull();
  });
});
