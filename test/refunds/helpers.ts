import type { TestServer } from '../helpers/server.ts';

export { paidPayment } from '../helpers/factories.ts';

export const refund = (t: TestServer, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', '/v1/refunds', { key, body, headers });

export const refundRow = async (t: TestServer, id: string) => (await t.sql`select * from refunds where id = ${id}`)[0];
export const paymentRow = async (t: TestServer, id: string) => (await t.sql`select * from payments where id = ${id}`)[0]!;
