-- Stripe as the card processor (issue 12).

-- Stripe's events already handled (POST /processor/stripe/webhook): a redelivered event, by its
-- id, is answered 200 and changes nothing. Written after the event's handling committed; the
-- handlers are idempotent themselves, so two copies arriving together still settle once.
create table processor_events (
  id text collate "C" primary key,           -- Stripe's evt_…
  type text not null,
  livemode boolean not null,
  received_at timestamptz not null default now()
);

-- The webhook finds a payment by its intent (pi_…): the session of that intent and its attempts.
create index checkout_sessions_intent on checkout_sessions (payment_intent_id) where payment_intent_id is not null;
create index payments_intent on payments (payment_intent_id) where payment_intent_id is not null;

-- An expired session's intent is cancelled at the processor after the expiry commits; until that
-- is confirmed (or the intent is found charged, and refunded), the `checkout-intents` repair pass
-- asks again.
alter table checkout_sessions add column intent_closed_at timestamptz;
create index checkout_sessions_intent_open on checkout_sessions (updated_at)
  where status = 'EXPIRED' and payment_intent_id is not null and intent_closed_at is null;
