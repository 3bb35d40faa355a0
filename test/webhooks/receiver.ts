// Moved to test/helpers/receiver.ts; re-exported for the webhook tests.
export { startReceiver, useReceiver, verifyWithStripe, type Behaviour, type Received, type Receiver } from '../helpers/receiver.ts';
