-- The simulator's scripted test cards (docs/payments.md): 4000 0000 0000 5126 charges, but its
-- refunds fail; 4000 0000 0000 0259 charges, then is disputed. The behaviour is kept with the
-- simulator's attempt; the card number never is.
alter table simulator_attempts add column behaviour text check (behaviour in ('refunds_fail', 'disputed'));
