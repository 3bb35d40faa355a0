// Shared with other folders' tests: test/helpers/element-payer.ts. Re-exported for the processor's tests.
export { delivered, ElementPayer, eventTypes, paymentsOf, preparedLiveSession, sessionRow } from '../helpers/element-payer.ts';
