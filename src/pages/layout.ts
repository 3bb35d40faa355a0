import { createHash } from 'node:crypto';
import { html, raw, type Html } from './html.ts';

/**
 * The shared look of every hosted page (checkout, payment links, receipts): one column, large
 * touch targets, system fonts, no JavaScript (but Stripe.js and our one script on the Payment
 * Element page). The stylesheet is inline and allowed by its hash in
 * the Content-Security-Policy, so the pages need no asset route and no 'unsafe-inline'.
 */
export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f4f7;color:#1a1f36;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:28rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(26,31,54,.12),0 8px 24px rgba(26,31,54,.06);padding:1.5rem}
.merchant{font-size:.875rem;color:#5b6478;margin:0 0 .25rem}
.badges{display:flex;flex-wrap:wrap;gap:.375rem;margin:0 0 .5rem}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8125rem}
h1{font-size:1.25rem;line-height:1.3;margin:0 0 .5rem}
.amount{font-size:2rem;font-weight:700;letter-spacing:-.01em;margin:0 0 .25rem}
.muted{color:#5b6478;font-size:.9375rem}
.description{margin:.25rem 0 1rem;color:#3c4257}
table.items{width:100%;border-collapse:collapse;margin:0 0 1.25rem;font-size:.9375rem}
table.items th,table.items td{padding:.5rem 0;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
table.items th{font-weight:600;color:#5b6478;font-size:.8125rem;text-transform:uppercase;letter-spacing:.04em}
table.items .num{text-align:right;white-space:nowrap;padding-left:.75rem}
table.items tfoot td{border-bottom:0;font-weight:700}
form{margin:0}
.field{margin:0 0 1rem}
.row{display:flex;gap:.75rem}
.row .field{flex:1;min-width:0}
label,.label{display:block;font-weight:600;font-size:.875rem;margin:0 0 .375rem}
.hint{font-weight:400;color:#5b6478;font-size:.8125rem}
.label-row{display:flex;justify-content:space-between;align-items:baseline;gap:.5rem;margin:0 0 .375rem}
.label-row label{margin:0}
input{display:block;width:100%;font:inherit;font-size:1rem;padding:.7rem .8rem;border:1px solid #c9ced8;border-radius:8px;background:#fff;color:inherit;min-height:2.875rem}
input:focus{outline:3px solid rgba(99,91,255,.35);border-color:#635bff}
input[aria-invalid=true]{border-color:#cd3d64}
.field-error{color:#b3093c;font-size:.875rem;line-height:1.35;margin:.375rem 0 0}
.btn{display:block;width:100%;font:inherit;font-weight:600;font-size:1.0625rem;padding:.85rem 1rem;border:0;border-radius:8px;background:#635bff;color:#fff;cursor:pointer;text-align:center;text-decoration:none;min-height:3rem}
.btn:hover{background:#5148e8}
.btn:focus-visible{outline:3px solid rgba(99,91,255,.45);outline-offset:2px}
.btn.secondary{background:#fff;color:#1a1f36;border:1px solid #c9ced8}
.btn.secondary:hover{background:#f6f7f9}
.btn.danger{background:#fff;color:#b3093c;border:1px solid #e3a5b7}
.stack>*+*{margin-top:.75rem}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;font-size:.9375rem}
.alert.error{background:#fdecef;color:#8a0b2f;border:1px solid #f5c2cf}
.alert:empty,.field-error:empty{display:none}
.element-mount{min-height:2.875rem}
.btn:disabled{opacity:.6;cursor:progress}
.alert.info{background:#eef3ff;color:#1d3b8f;border:1px solid #c9d7ff}
.alert.success{background:#e9f8f0;color:#0b6b3a;border:1px solid #bfe8d0}
.status{display:inline-block;font-size:.8125rem;font-weight:700;padding:.125rem .5rem;border-radius:999px;background:#e9f8f0;color:#0b6b3a}
.status.off{background:#eceef2;color:#3c4257}
.status.warn{background:#fff1e0;color:#8a4500}
.cancel{display:block;text-align:center;margin-top:1rem;color:#5b6478}
.cancel:hover{color:#1a1f36}
dl.facts{display:grid;grid-template-columns:auto 1fr;gap:.375rem 1rem;margin:1rem 0;font-size:.9375rem}
dl.facts dt{color:#5b6478}
dl.facts dd{margin:0;text-align:right;overflow-wrap:anywhere}
footer{text-align:center;color:#7a8294;font-size:.8125rem;margin-top:1.25rem}
a{color:#4b44d6}
.brand{display:flex;align-items:center;gap:.75rem;margin:0 0 1rem;min-height:2.5rem}
.brand img{display:block;max-height:2.5rem;max-width:10rem;width:auto;height:auto}
.brand-name{font-weight:700;font-size:1.0625rem;margin:0;overflow-wrap:anywhere}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
fieldset.choices{border:0;padding:0;margin:0 0 1rem;min-width:0}
fieldset.choices legend{font-weight:600;font-size:.875rem;margin:0 0 .5rem;padding:0}
label.choice,label.check{display:flex;gap:.625rem;align-items:flex-start;font-weight:400;font-size:.9375rem}
label.choice{border:1px solid #c9ced8;border-radius:8px;padding:.75rem;margin:0 0 .5rem;cursor:pointer}
label.choice:has(input:checked){border-color:#635bff;box-shadow:0 0 0 1px #635bff}
input[type=radio],input[type=checkbox]{display:block;flex:none;width:1.25rem;height:1.25rem;min-height:0;margin:.125rem 0 0;padding:0;accent-color:#635bff}
.choice-body{display:flex;flex-direction:column;gap:.125rem;min-width:0;flex:1}
.choice-body small{color:#5b6478;font-size:.8125rem;line-height:1.4;margin-top:.25rem}
ol.schedule{list-style:none;margin:.25rem 0 0;padding:0;font-size:.9375rem}
ol.schedule li{display:flex;justify-content:space-between;gap:.75rem;padding:.125rem 0;border-bottom:1px dashed #e6e8ee}
ol.schedule li:last-child{border-bottom:0}
ol.schedule .num{white-space:nowrap;font-variant-numeric:tabular-nums}
.plan-note{margin:0 0 1rem}
table.items.parts th+th,table.items.parts td+td{padding-left:.75rem}
@media (max-width:420px){main{padding:1rem .75rem 2rem}.card{padding:1.25rem 1rem}.amount{font-size:1.75rem}
dl.facts{grid-template-columns:1fr;gap:0}dl.facts dt{font-size:.8125rem;margin-top:.5rem}dl.facts dd{text-align:left}}
`.trim();

/** The CSP source that allows exactly PAGE_CSS. */
export const PAGE_CSS_HASH = `'sha256-${createHash('sha256').update(PAGE_CSS).digest('base64')}'`;

/**
 * The pages' icon, inline (img-src allows data:): a card on a rounded square. Inline, so that no
 * page makes a request for /favicon.ico (which answers 204 for whoever asks anyway: src/app.ts).
 */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#5046e5"/><rect x="6" y="9" width="20" height="14" rx="2.5" fill="#fff"/><rect x="6" y="12" width="20" height="3" fill="#5046e5"/></svg>';
export const FAVICON_HREF = `data:image/svg+xml,${encodeURIComponent(FAVICON_SVG)}`;

/** What the merchant chose for its hosted pages (accounts: business_name, brand_color, logo_url). */
export interface PageBrand {
  business_name: string | null;
  /** `#rrggbb` (lower case), or null for the default colour. */
  brand_color: string | null;
  /** An https URL (validated by the API), or null. */
  logo_url: string | null;
}

const channel = (c: number) => {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};

/** The WCAG relative luminance of `#rrggbb`, 0 (black) to 1 (white). */
export function relativeLuminance(hex: string): number {
  const n = parseInt(hex.slice(1), 16);
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
}

/** The WCAG contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The text colour of a button of background `bg`: white or black, whichever contrasts more. One
 * of the two always reaches at least 4.58:1, above WCAG AA for normal text (4.5:1).
 */
export function textColorOn(bg: string): '#ffffff' | '#000000' {
  return contrastRatio(bg, '#ffffff') >= contrastRatio(bg, '#000000') ? '#ffffff' : '#000000';
}

/**
 * The per-page stylesheet of a brand colour: the primary buttons (not the secondary or danger
 * ones, whose rules are more specific) in that colour, with the text colour of textColorOn. Only
 * ever built from a validated `#rrggbb`; allowed by its own hash (brandCssHash) in the page's CSP.
 */
export function brandCss(color: string): string {
  if (!/^#[0-9a-f]{6}$/.test(color)) throw new Error('brand colour must be #rrggbb in lower case');
  return `.btn{background:${color};color:${textColorOn(color)}}.btn:not(.secondary):not(.danger):hover{background:${color};filter:brightness(.92)}`;
}

/** The CSP source that allows exactly brandCss(color). */
export const brandCssHash = (color: string): string => `'sha256-${createHash('sha256').update(brandCss(color)).digest('base64')}'`;

/** The business name and the logo at the top of a hosted page; nothing when neither is set. */
function brandHeader(brand: PageBrand | undefined): Html {
  if (!brand || (!brand.business_name && !brand.logo_url)) return html``;
  return html`<header class="brand">
${brand.logo_url ? html`<img src="${brand.logo_url}" alt="${brand.business_name ?? 'Merchant logo'}">` : ''}${brand.business_name ? html`<p class="brand-name">${brand.business_name}</p>` : ''}
</header>
`;
}

export interface PageOptions {
  /** The document title (the tab); also the default heading for screen readers. */
  title: string;
  body: Html;
  lang?: string;
  /** Script files, run in order after parsing (`defer`); only the Payment Element page has any. */
  scripts?: readonly string[];
  /**
   * The merchant's name, logo and colour (hosted checkout, link and invoice pages). The response
   * must allow them in its CSP: allowBrand (security.ts).
   */
  brand?: PageBrand;
  /** Stylesheets after PAGE_CSS (the customer portal's), each allowed by its hash in the response's CSP. */
  styles?: readonly string[];
  /** The closing line under the body; null: none (the portal ends with the merchant's support address). */
  footer?: string | null;
}

const SECURE_FOOTER = 'Payments are processed securely. Card numbers are never stored.';

/** A complete HTML document around `body`. */
export function renderPage(opts: PageOptions): string {
  return html`<!doctype html>
<html lang="${opts.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<link rel="icon" href="${FAVICON_HREF}">
<title>${opts.title}</title>
<style>${raw(PAGE_CSS)}</style>
${(opts.styles ?? []).map((css) => html`<style>${raw(css)}</style>
`)}${opts.brand?.brand_color ? html`<style>${raw(brandCss(opts.brand.brand_color))}</style>
` : ''}${(opts.scripts ?? []).map((src) => html`<script src="${src}" defer></script>
`)}</head>
<body>
<main>
${brandHeader(opts.brand)}${opts.body}
${opts.footer === null ? '' : html`<footer>${opts.footer ?? SECURE_FOOTER}</footer>`}
</main>
</body>
</html>
`.value;
}

/** An error or notice box that screen readers announce. */
export function alertBox(kind: 'error' | 'info' | 'success', message: string | null | undefined): Html {
  if (!message) return html``;
  return html`<div class="alert ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</div>`;
}

/** A page with a heading and one sentence: not found, a form that could not be read, an error. */
export function messagePage(heading: string, message: string): string {
  return renderPage({ title: heading, body: html`<div class="card stack"><h1>${heading}</h1><p>${message}</p></div>` });
}
