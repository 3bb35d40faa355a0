import type { CardDetails } from './types.ts';

/** Luhn check digit test over a string of digits. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function cardBrand(number: string): string {
  if (/^4/.test(number)) return 'visa';
  const p2 = Number(number.slice(0, 2));
  const p4 = Number(number.slice(0, 4));
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^(30[0-5]|36|38)/.test(number)) return 'diners';
  if (/^35(2[89]|[3-8]\d)/.test(number)) return 'jcb';
  if (/^62/.test(number)) return 'unionpay';
  return 'unknown';
}

export interface CardForm {
  email: string;
  name: string;
  card_number: string;
  expiry: string;
  cvc: string;
}

export type CardFormErrors = Partial<Record<keyof CardForm, string>>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The payer's email on the hosted checkout (card form and Payment Element alike): its message, or null. */
export const emailProblem = (email: string): string | null =>
  EMAIL.test(email) && email.length <= 254 ? null : 'Enter a valid email address.';

/**
 * Checks the hosted form: email, name, a Luhn-valid number, an expiry (MM/YY) not in the past
 * and a CVC of the brand's length. Every problem gets a message for its field.
 */
export function parseCardForm(form: CardForm, now = new Date()): { card: CardDetails; email: string } | { errors: CardFormErrors } {
  const errors: CardFormErrors = {};
  const email = form.email.trim();
  const name = form.name.trim().replace(/\s+/g, ' ');
  const number = form.card_number.replace(/[\s-]/g, '');
  const cvc = form.cvc.trim();

  const badEmail = emailProblem(email);
  if (badEmail) errors.email = badEmail;
  if (!name) errors.name = 'Enter the name on the card.';
  else if (name.length > 200) errors.name = 'The name on the card is at most 200 characters.';

  if (!/^\d{12,19}$/.test(number) || !luhn(number)) errors.card_number = 'Your card number is invalid.';

  let expMonth = 0;
  let expYear = 0;
  const exp = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(form.expiry);
  if (!exp) errors.expiry = 'Enter the expiry date as MM/YY.';
  else {
    expMonth = Number(exp[1]);
    expYear = exp[2]!.length === 2 ? 2000 + Number(exp[2]) : Number(exp[2]);
    const endOfMonth = Date.UTC(expYear, expMonth, 1); // first instant after the expiry month
    if (expMonth < 1 || expMonth > 12) errors.expiry = 'The expiry month must be between 01 and 12.';
    else if (endOfMonth <= now.getTime()) errors.expiry = "Your card's expiry date is in the past.";
    else if (expYear > now.getUTCFullYear() + 50) errors.expiry = "Your card's expiry year is invalid.";
  }

  const cvcLength = cardBrand(number) === 'amex' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test(cvc)) errors.cvc = `Enter the ${cvcLength}-digit security code.`;

  if (Object.keys(errors).length) return { errors };
  return { card: { number, expMonth, expYear, cvc, name }, email };
}
