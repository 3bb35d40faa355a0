import { describe, expect, it } from 'vitest';
import { cardBrand, luhn, parseCardForm } from '../../src/processor/cards.ts';
import { CARDS, DIGITS } from '../helpers/cards.ts';

const NOW = new Date(Date.UTC(2030, 5, 15));
const form = { email: 'payer@example.com', name: 'Ada Lovelace', card_number: CARDS.visa, expiry: '12/34', cvc: '123' };

describe('card checks of the hosted form', () => {
  it('when numbers are checked, then Luhn accepts the test cards and refuses a changed digit', () => {
    for (const n of [DIGITS.visa, DIGITS.declined, DIGITS.threeDSAlt, '5555555555554444', '378282246310005']) expect(luhn(n)).toBe(true);
    expect(luhn(DIGITS.invalidNumber)).toBe(false);
    expect(luhn('5555555555554445')).toBe(false);
  });

  it.each([
    [DIGITS.visa, 'visa'],
    ['5555555555554444', 'mastercard'],
    ['2223003122003222', 'mastercard'],
    ['378282246310005', 'amex'],
    ['6011111111111117', 'discover'],
    ['3056930009020004', 'diners'],
    ['3566002020360505', 'jcb'],
    ['6200000000000005', 'unionpay'],
    ['9999999999999995', 'unknown'],
  ])('when the number is %s, then the brand is %s', (n, brand) => {
    expect(cardBrand(n)).toBe(brand);
  });

  it('when the form is valid, then the card is answered with spaces and dashes removed and the name tidied', () => {
    expect(parseCardForm({ ...form, card_number: '4242-4242 4242-4242', name: '  Ada   Lovelace ', email: ' payer@example.com ' }, NOW)).toEqual({
      card: { number: DIGITS.visa, expMonth: 12, expYear: 2034, cvc: '123', name: 'Ada Lovelace' },
      email: 'payer@example.com',
    });
  });

  it('when every field is wrong, then each gets its own message', () => {
    const r = parseCardForm({ email: 'nope', name: ' ', card_number: DIGITS.invalidNumber, expiry: '1234', cvc: '12' }, NOW);
    expect(r).toEqual({
      errors: {
        email: 'Enter a valid email address.',
        name: 'Enter the name on the card.',
        card_number: 'Your card number is invalid.',
        expiry: 'Enter the expiry date as MM/YY.',
        cvc: 'Enter the 3-digit security code.',
      },
    });
  });

  it('when the expiry is this month, then it is accepted; last month is refused', () => {
    expect('card' in parseCardForm({ ...form, expiry: '06/30' }, NOW)).toBe(true);
    expect(parseCardForm({ ...form, expiry: '05/30' }, NOW)).toMatchObject({ errors: { expiry: expect.stringContaining('past') } });
    expect('card' in parseCardForm({ ...form, expiry: '06/2030' }, NOW)).toBe(true);
  });

  it('when the month is out of range or the year too far ahead, then the expiry is refused', () => {
    expect(parseCardForm({ ...form, expiry: '13/34' }, NOW)).toMatchObject({ errors: { expiry: expect.stringContaining('between 01 and 12') } });
    expect(parseCardForm({ ...form, expiry: '00/34' }, NOW)).toMatchObject({ errors: { expiry: expect.stringContaining('between 01 and 12') } });
    expect(parseCardForm({ ...form, expiry: '12/2090' }, NOW)).toMatchObject({ errors: { expiry: expect.stringContaining('year is invalid') } });
  });

  it('when the card is an Amex, then its CVC has four digits', () => {
    const amex = { ...form, card_number: '378282246310005' };
    expect(parseCardForm({ ...amex, cvc: '123' }, NOW)).toMatchObject({ errors: { cvc: expect.stringContaining('4-digit') } });
    expect('card' in parseCardForm({ ...amex, cvc: '1234' }, NOW)).toBe(true);
  });

  it('when the number is too short or too long, then it is refused even if Luhn-valid', () => {
    expect(parseCardForm({ ...form, card_number: '42424242426' }, NOW)).toMatchObject({ errors: { card_number: expect.any(String) } });
    expect(parseCardForm({ ...form, card_number: '4'.repeat(19) + '0' }, NOW)).toMatchObject({ errors: { card_number: expect.any(String) } });
  });
});
