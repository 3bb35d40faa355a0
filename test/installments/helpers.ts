import type { TestServer } from '../helpers/server.ts';

export { createInstallmentLink } from '../helpers/factories.ts';
export { choosePlan, partsOf, startPlan } from '../helpers/plans.ts';

export const planRow = async (t: TestServer, planId: string) => (await t.sql`select * from installment_plans where id = ${planId}`)[0]!;
export const paymentsOfPlan = (t: TestServer, planId: string) => t.sql`select * from payments where installment_plan_id = ${planId} order by id`;
export const eventTypes = async (t: TestServer, objectId: string) =>
  (await t.sql<{ type: string }[]>`select type from events where data->'object'->>'id' = ${objectId} order by id`).map((r) => r.type);
