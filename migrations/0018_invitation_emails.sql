-- Issue 14: an invitation to the dashboard is an email like the others (a row and a send job),
-- queued in the transaction that creates the user and its one-time set-password link.
alter table emails drop constraint emails_template_check;
alter table emails add constraint emails_template_check
  check (template in ('receipt', 'refund_notice', 'invoice', 'invoice_reminder', 'invitation'));
