// The checkout factories are shared (test/helpers/factories.ts); re-exported for the checkout tests.
export { SUCCESS_URL, createSession, teaRoomOrder } from '../helpers/factories.ts';
