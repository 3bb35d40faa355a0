-- Issue 14: the account's branding, shared by both modes: the Reply-To of its emails, and the
-- colour and logo of its hosted checkout, payment link and invoice pages. Validated by the API
-- (src/auth/routes.ts); the checks keep a bad value written by hand out of the pages' CSS and CSP.
alter table accounts add column support_email text;
alter table accounts add column brand_color text check (brand_color ~ '^#[0-9a-f]{6}$');
alter table accounts add column logo_url text check (logo_url like 'https://%' and length(logo_url) <= 2000);
