import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/lib/ids.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { DIGITS } from '../helpers/cards.ts';

describe('ids', () => {
  it('when many ids are minted in one millisecond, then they are unique and sort in minting order', () => {
    const ids = Array.from({ length: 50_000 }, () => newId('cus'));
    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(sorted).toEqual(ids);
    for (const id of ids.slice(0, 100)) expect(isId('cus', id)).toBe(true);
  });

  it('when an id of another prefix or shape is checked, then it is refused', () => {
    const id = newId('cus');
    expect(isId('pl', id)).toBe(false);
    expect(isId('cus', id.toUpperCase())).toBe(false);
    expect(isId('cus', `${id}x`)).toBe(false);
    expect(isId('cus', 'cus_')).toBe(false);
  });

  it('when ids are minted a millisecond apart, then the time part orders them', async () => {
    const a = newId('evt');
    await new Promise((r) => setTimeout(r, 2)); // the subject: ids minted in two different milliseconds
    const b = newId('evt');
    expect(a.slice(4, 14) < b.slice(4, 14)).toBe(true);
  });
});

describe('logs', () => {
  it('when secrets and card fields are logged, then they are redacted', async () => {
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, cb) => ((out += chunk), cb()) });
    const log = createLogger('info', sink);
    log.info(
      {
        req: { headers: { authorization: 'Bearer sk_test_SECRET0000000000000000000000000' } },
        body: { card_number: DIGITS.visa, cvc: '123', exp: '12/30' },
        endpoint: { signing_secret: 'whsec_SECRET' },
        key: 'sk_live_SECRET',
      },
      'request',
    );
    expect(out).toContain('[redacted]');
    expect(out).not.toMatch(/SECRET|4242424242424242|"123"|12\/30/);
  });
});
