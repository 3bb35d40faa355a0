-- Page views are stored per batch (issue 28): a row is one link and source of one batch of the web
-- process, and `views` the page loads it holds. The rows written before hold one load each.
-- No rewrite: a constant default is only written in the catalogue, and the check is not validated
-- against those rows (every one of them is 1).
alter table payment_link_views add column views integer not null default 1;
alter table payment_link_views add constraint payment_link_views_views_positive check (views > 0) not valid;
