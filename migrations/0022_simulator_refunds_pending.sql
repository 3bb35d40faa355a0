-- The simulator's test card 4000 0000 0000 7726 (issue 22): it charges, and its refunds stay
-- pending for a day, so that cancelling a refund can be tried (and shown in the README) at leisure.
alter table simulator_attempts drop constraint simulator_attempts_behaviour_check;
alter table simulator_attempts add constraint simulator_attempts_behaviour_check
  check (behaviour in ('refunds_fail', 'refunds_pending', 'disputed', 'off_session_declines'));
