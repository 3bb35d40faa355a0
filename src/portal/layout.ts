import { createHash } from 'node:crypto';
import { PAGE_CSS_HASH, renderPage, type Html, type PageBrand } from '../pages/index.ts';

/**
 * The portal's document: the hosted pages' stylesheet (PAGE_CSS) plus a few rules of its own (a
 * wider column for lists, section headings, the navigation, record lists), each allowed by its
 * hash in the CSP (PORTAL_STYLE_HASHES), the merchant's colour by allowBrand. No script.
 */
export const PORTAL_CSS = `
main{max-width:40rem}
h2{font-size:1.0625rem;line-height:1.3;margin:0 0 .75rem}
.card+.card{margin-top:1rem}
.topbar{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;margin:0 0 1rem}
nav.portal ul{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;list-style:none;margin:0;padding:0}
nav.portal a{display:inline-block;padding:.5rem 0;font-weight:600;text-decoration:none}
nav.portal a:hover{text-decoration:underline}
nav.portal a[aria-current=page]{color:#1a1f36;text-decoration:underline;text-underline-offset:.3em}
.records{list-style:none;margin:0;padding:0}
.records>li{display:flex;justify-content:space-between;align-items:flex-start;gap:.75rem;padding:.75rem 0;border-bottom:1px solid #e6e8ee}
.records>li:first-child{padding-top:0}
.records>li:last-child{border-bottom:0;padding-bottom:0}
.records .what{min-width:0;overflow-wrap:anywhere}
.records .what a{font-weight:600}
.records .meta{display:block;color:#5b6478;font-size:.875rem;margin-top:.125rem}
.records .side{text-align:right;white-space:nowrap;font-weight:600}
.records .side .btn{margin-top:.375rem}
.btn.small{display:inline-block;width:auto;font-size:.9375rem;padding:.5rem 1rem;min-height:2.5rem}
.more{margin:1rem 0 0;font-weight:600}
.pager{display:flex;justify-content:space-between;gap:1rem;margin:1rem 0 0;font-weight:600}
.signed-in{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.75rem}
.signed-in p{margin:0;overflow-wrap:anywhere}
.signed-in .btn{width:auto}
.back{display:block;margin:1rem 0 0;text-align:center;font-weight:600}
.empty{color:#5b6478;margin:0}
.support{text-align:center;margin:1rem 0 0}
`.trim();

const hashOf = (css: string) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`;

/** The style-src of the portal's pages: the hosted pages' stylesheet and the portal's own. */
export const PORTAL_STYLE_HASHES = `${PAGE_CSS_HASH} ${hashOf(PORTAL_CSS)}`;

/** A complete portal page in the merchant's branding (the response allows it: allowBrand). */
export function portalDocument(title: string, brand: PageBrand, body: Html): string {
  return renderPage({ title, body, brand, styles: [PORTAL_CSS], footer: null });
}
