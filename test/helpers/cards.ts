/**
 * The simulator's test cards (docs: DESIGN 7, src/processor/simulator.ts), by what they do, written
 * as a payer types them (groups of four). `DIGITS` has the same numbers without spaces, for the
 * places that take the bare number (the Stripe stand-in, a parser's own tests).
 */
export const CARDS = {
  /** Succeeds. */
  visa: '4242 4242 4242 4242',
  /** Fails the Luhn check: the page refuses it before any processor sees it. */
  invalidNumber: '4242 4242 4242 4241',
  /** Declined (card_declined). */
  declined: '4000 0000 0000 0002',
  insufficientFunds: '4000 0000 0000 9995',
  expired: '4000 0000 0000 0069',
  incorrectCvc: '4000 0000 0000 0127',
  /** Asks for 3-D Secure (the simulator's challenge). */
  threeDS: '4000 0000 0000 3220',
  /** Asks for 3-D Secure too (Stripe's other authentication card). */
  threeDSAlt: '4000 0025 0000 3155',
  /** Stripe's card that authenticates on every payment, off-session ones included (the stand-in). */
  alwaysAuthenticate: '4000 0027 6000 3184',
  /** The first, on-session charge succeeds; later off-session charges are declined. */
  laterDeclines: '4000 0000 0000 0341',
  /** Its refunds fail. */
  refundFails: '4000 0000 0000 5126',
  /** Its refunds stay pending. */
  refundPending: '4000 0000 0000 7726',
  /** Paid, then disputed. */
  disputed: '4000 0000 0000 0259',
  /** Issued in another country (fraud rules: card_country); they succeed. Every other card is issued in the US. */
  brazil: '4000 0007 6000 0002',
  canada: '4000 0012 4000 0000',
  france: '4000 0025 0000 0003',
  germany: '4000 0027 6000 0016',
  nigeria: '4000 0056 6000 0002',
  unitedKingdom: '4000 0082 6000 0000',
} as const;

export type CardName = keyof typeof CARDS;

/** The numbers of CARDS without spaces. */
export const DIGITS = Object.fromEntries(Object.entries(CARDS).map(([k, v]) => [k, v.replaceAll(' ', '')])) as { readonly [K in CardName]: string };
