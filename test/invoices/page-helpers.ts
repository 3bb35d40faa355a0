import { BILLED_CUSTOMER, createCustomer as customer } from '../helpers/factories.ts';
import type { TestServer } from '../helpers/server.ts';

export { sentInvoice } from '../helpers/factories.ts';
export { payInvoice, sessionOf, startPayment } from '../helpers/payer.ts';

/** A customer to bill (notes set on purpose: they must never reach a page, a PDF or an email). */
export const createCustomer = (t: TestServer, key: string, body: Record<string, unknown> = {}) => customer(t, key, { ...BILLED_CUSTOMER, ...body });

export const invoiceRow = async (t: TestServer, id: string) => (await t.sql`select * from invoices where id = ${id}`)[0]!;
