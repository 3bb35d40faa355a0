// Preloaded into the service (`node --import bench/email-no-receipts.ts src/main.ts`) by the
// payment-path measurement of bench/email.ts: replaces the receipts participant
// (src/checkout/receipt.ts) with one that does nothing, so that the same hosted-page flow can be
// measured with and without its receipt. The hosted card form requires an email, so a payment
// through it always has a recipient: without this, every such payment queues a receipt.
// Nothing else of the service changes. Bench only; never loaded by the service itself.
import { registerHooks } from 'node:module';

const TARGET = '/src/checkout/receipt.ts';
const NO_OP = `export const receiptParticipant = () => ({
  name: 'receipts',
  beforeCharge: () => Promise.resolve(null),
  afterSuccess: () => Promise.resolve(),
});
`;

registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:') && new URL(url).pathname.endsWith(TARGET)) {
      return { format: 'module', source: NO_OP, shortCircuit: true };
    }
    return nextLoad(url, context);
  },
});
