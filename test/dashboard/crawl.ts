// Shared with test/ops: test/helpers/dash-crawl.ts. Re-exported for the dashboard's tests.
export { crawl, RECORD_ID, seedEverySection, unescapeHtml, type Crawl, type PageForm } from '../helpers/dash-crawl.ts';
