-- The processor-customer sweep reads the customers that have no processor twin yet: a partial
-- index keeps that read small however many customers there are.
create index customers_missing_processor on customers (id) where processor_customer_id is null;
