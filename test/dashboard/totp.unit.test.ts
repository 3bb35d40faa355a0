import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { checkTotp, formatRecoveryCode, newRecoveryCodes, newTotpSecret, normaliseCode, RECOVERY_CODE, totpUri } from '../../src/dashboard/security/totp.ts';

// Issue 25, point 3: the TOTP checks and the recovery codes, with codes computed by otplib at fixed times.
const T = 1_800_000_015; // 15 s into a 30 s time step
const STEP = Math.floor(T / 30);

describe('checkTotp', () => {
  const secret = newTotpSecret();
  const at = (seconds: number) => generate({ secret, epoch: seconds });

  it('when the code of now is given, then its time step is answered', async () => {
    expect(await checkTotp(secret, await at(T), null, T)).toBe(STEP);
  });

  it('when the code is one step early or late (a clock off by up to 30 s), then it is taken; two steps off, refused', async () => {
    expect(await checkTotp(secret, await at(T - 30), null, T)).toBe(STEP - 1);
    expect(await checkTotp(secret, await at(T + 30), null, T)).toBe(STEP + 1);
    expect(await checkTotp(secret, await at(T - 60), null, T)).toBeNull();
    expect(await checkTotp(secret, await at(T + 60), null, T)).toBeNull();
  });

  it('when the step of the code, or a later one, was taken already, then the code is refused (no replay)', async () => {
    const code = await at(T);
    expect(await checkTotp(secret, code, STEP, T)).toBeNull();
    expect(await checkTotp(secret, code, STEP + 1, T)).toBeNull();
    expect(await checkTotp(secret, code, STEP - 1, T)).toBe(STEP);
  });

  it('when the code is wrong, of another secret, or not six digits, then it is refused', async () => {
    const right = await at(T);
    expect(await checkTotp(secret, String((Number(right) + 1) % 1e6).padStart(6, '0'), null, T)).toBeNull();
    expect(await checkTotp(newTotpSecret(), right, null, T)).toBeNull();
    for (const bad of ['', '12345', '1234567', 'abcdef', `${right} `]) expect(await checkTotp(secret, bad, null, T)).toBeNull();
  });
});

describe('codes as typed', () => {
  it('when spaces, dashes or capitals are typed, then they are ignored', () => {
    expect(normaliseCode(' 123 456 ')).toBe('123456');
    expect(normaliseCode('ABCD-efgh-2345')).toBe('abcdefgh2345');
  });

  it('when recovery codes are made, then there are 10, all different, 12 characters of the alphabet, shown as xxxx-xxxx-xxxx', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) {
      expect(c).toMatch(RECOVERY_CODE);
      expect(normaliseCode(formatRecoveryCode(c))).toBe(c);
    }
  });

  it('when the otpauth URI is made, then it names the business and the user and carries the secret', () => {
    const uri = new URL(totpUri('Acme Ltd', 'ann@example.com', 'JBSWY3DPEHPK3PXP'));
    expect(uri.protocol).toBe('otpauth:');
    expect(decodeURIComponent(uri.pathname)).toContain('Acme Ltd:ann@example.com');
    expect(uri.searchParams.get('secret')).toBe('JBSWY3DPEHPK3PXP');
    expect(uri.searchParams.get('issuer')).toBe('Acme Ltd');
  });
});
