// receiver.mjs: a webhook receiver that verifies every delivery's signature (Node 18+, Express 4 or 5).
// In this project: WEBHOOK_SECRET=whsec_… node examples/receiver.mjs; elsewhere: npm install express first.
// Port: RECEIVER_PORT (default 4000). It exits 1 with one line when it cannot listen.
import express from 'express';
import { createHmac, timingSafeEqual } from 'node:crypto';

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  console.error("error: set WEBHOOK_SECRET to the endpoint's signing secret (whsec_…): `npx payments-service listen --print-secret` prints listen's");
  process.exit(1);
}
const port = Number(process.env.RECEIVER_PORT ?? 4000);

/** Why a delivery must be refused, or null when its Service-Signature is good (5 minutes of tolerance). */
export function signatureProblem(rawBody, header, secret, toleranceSeconds = 300) {
  if (!header) return 'no Service-Signature header';
  const pairs = String(header).split(',').map((part) => part.split('='));
  const t = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return 'no timestamp (t=) in Service-Signature';
  const age = Math.round(Date.now() / 1000 - t);
  if (Math.abs(age) > toleranceSeconds) return `timestamp ${age} s from this clock, over the ${toleranceSeconds} s tolerance (a replay, or a clock to fix)`;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const match = pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
  return match ? null : 'signature does not match: is WEBHOOK_SECRET the secret of this endpoint (or of listen)? was the body changed?';
}

const app = express();
// The signature covers the raw bytes: keep the body raw on this route, parse it after checking.
app.post('/webhooks', express.raw({ type: '*/*' }), (req, res) => {
  const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  const problem = signatureProblem(body, req.get('Service-Signature'), secret);
  if (problem) {
    console.log(`refused ${req.get('Service-Event-Id') ?? 'a delivery'}: ${problem}`);
    return res.status(400).send(problem);
  }
  const event = JSON.parse(body);
  console.log(`${event.type} ${event.id} ${event.data.object.id}`); // …record event.id, then act on event.type
  res.sendStatus(200);
});

const failed = (err) => {
  console.error(`error: cannot listen on port ${port} (${err.code ?? err.message}): another process has it; set RECEIVER_PORT to a free port`);
  process.exit(1);
};
// Express 5 hands a listen error to the callback; Express 4 emits it on the server.
const server = app.listen(port, (err) => (err ? failed(err) : console.log(`Waiting for events on http://localhost:${port}/webhooks`)));
server.on('error', failed);
