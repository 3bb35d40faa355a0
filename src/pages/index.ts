// What other components use to build hosted pages (checkout, payment links, receipts).
export { escapeHtml, html, raw, sendHtml, sendSlotted, Html, SlottedPages } from './html.ts';
export { alertBox, brandCss, brandCssHash, contrastRatio, FAVICON_HREF, messagePage, PAGE_CSS, PAGE_CSS_HASH, relativeLuminance, renderPage, textColorOn, type PageBrand, type PageOptions } from './layout.ts';
export { allowBrand, allowFormTargets, allowPaymentElement, createCsrf, hostedPageErrors, readCsrfSecret, hostedPageSecurity, type Csrf, type StripeOrigins } from './security.ts';
export { staticScript, type StaticAsset } from './assets.ts';
export { formatAmount } from '../lib/currency.ts';
export { formText, refuseUnreadableInput, unreadableFields } from './input.ts';
export { pageRoutes, type PageLoader } from './route.ts';
export { clientAddress, fallbackWarning, hostedPageLimits, HourlyLimit, takeAll, throttledAnswer, type HostedPageLimits, type Throttled } from './rate-limit.ts';
