// Shared (test/helpers/): re-exported for the payment-link tests.
export { createLink } from '../helpers/factories.ts';
export { payThroughLink } from '../helpers/payer.ts';
