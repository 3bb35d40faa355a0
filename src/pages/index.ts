// What other components use to build hosted pages (checkout, payment links, receipts).
export { escapeHtml, html, raw, Html } from './html.ts';
export { alertBox, messagePage, PAGE_CSS, PAGE_CSS_HASH, renderPage, type PageOptions } from './layout.ts';
export { allowFormTargets, createCsrf, hostedPageErrors, hostedPageSecurity, type Csrf } from './security.ts';
export { formatAmount } from '../lib/currency.ts';
