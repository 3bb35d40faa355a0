import { Router, type Request, type Response } from 'express';
import { decideReview } from '../../checkout/review.ts';
import { CreateFraudListItem, CreateFraudRule, TryFraudRule, UpdateFraudRule } from '../../fraud/schema.ts';
import { createListItem, createRule, deleteListItem, deleteRule, tryRule, updateRule, type FraudCaller, type Trial } from '../../fraud/service.ts';
import * as store from '../../fraud/store.ts';
import type { ApiError } from '../../lib/errors.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { openReviews } from '../../payments/store.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { fieldsOf } from '../forms.ts';
import { emptyForm, type FormState, type Forms } from '../widgets.ts';
import { CONDITION_ROWS, FRAUD_PATH, fraudPage } from './views.ts';

const DONE: Record<string, string> = {
  rule_created: 'Rule created: it applies from the next payment attempt.',
  rule_updated: 'Rule updated.',
  rule_deleted: 'Rule deleted. Payments it decided keep its reason.',
  item_added: 'Added to the block list.',
  item_removed: 'Removed from the block list.',
  review_approved: 'Review approved: the payment is charged.',
  review_refused: 'Review refused: the authorisation is released and the payment failed.',
};

const SET_ATTRIBUTES = new Set(['currency', 'card_country', 'email_domain']);
const VELOCITY = new Set(['card_attempts', 'client_ip_attempts']);
/** A number typed in a form as the API's JSON would carry it: digits become a number, anything else stays text (the schema names it). */
const wholeNumber = (v: string | undefined): unknown => (v !== undefined && /^\d{1,12}$/.test(v.trim()) ? Number(v.trim()) : v);

/** The rule form's rows as the API's `conditions`: a row without an attribute is left out. */
function conditionsOf(v: Record<string, string>): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < CONDITION_ROWS; i++) {
    const attribute = v[`cond_${i}_attribute`]?.trim();
    if (!attribute) continue;
    const operator = v[`cond_${i}_operator`];
    const value = v[`cond_${i}_value`] ?? '';
    if (SET_ATTRIBUTES.has(attribute)) {
      out.push({ attribute, operator, values: value.split(',').map((x) => x.trim()).filter(Boolean) });
    } else {
      out.push({ attribute, operator, value: wholeNumber(value), ...(VELOCITY.has(attribute) ? { window_seconds: wholeNumber(v[`cond_${i}_window`]) } : {}) });
    }
  }
  return out;
}

/** The API's `conditions[0][values][1]` as the form's field (`cond_0_value`); the others as they are. */
function formParam(param: string | undefined, v: Record<string, string>): string | undefined {
  const m = /^conditions\[(\d+)\](?:\[([a-z_]+)\])?/.exec(param ?? '');
  if (!m) return param;
  // The n-th condition sent is the n-th row with an attribute.
  const rows = Array.from({ length: CONDITION_ROWS }, (_, i) => i).filter((i) => v[`cond_${i}_attribute`]?.trim());
  const row = rows[Number(m[1])] ?? 0;
  const field = m[2] === 'window_seconds' ? 'window' : m[2] === 'attribute' || m[2] === 'operator' ? m[2] : 'value';
  return `cond_${row}_${field}`;
}

/**
 * /dashboard/fraud (issue 27, point 4): the reviews waiting, the rules, "try a rule", the block
 * list, and the review decisions of a payment's page. Owners and administrators (`fraud.manage`);
 * every change through the services of /v1/fraud and the checkout's reviews, audit-logged there.
 */
export function fraudPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const caller = (req: Request, res: Response): FraudCaller => ({ actor: ctx.actor(req, res), log: req.log });

  type Extra = { rule?: FormState; item?: FormState; trial?: Trial | null };
  /** The page's records, then the page with the forms as given. */
  async function view(req: Request, res: Response, o: Extra = {}) {
    const owner = ctx.owner(res);
    const [rules, items, reviews] = await Promise.all([
      store.listRules(s.sql, owner, { limit: 100 }),
      store.listListItems(s.sql, owner, { limit: 100 }),
      openReviews(s.sql, owner),
    ]);
    const rule = o.rule ?? emptyForm({ action: 'block', cond_0_operator: 'gte' });
    return (f: Forms) =>
      fraudPage({ rules: rules.slice(0, 100), items: items.slice(0, 100), reviews, rule, item: o.item ?? emptyForm(), trial: o.trial ?? null, notice: doneNotice(req, DONE) }, f);
  }
  const show = async (req: Request, res: Response, o: Extra = {}, status = 200) => ctx.render(req, res, await view(req, res, o), status);
  const ruleFailed = async (req: Request, res: Response, err: ApiError) => {
    const values = fieldsOf(req);
    await show(req, res, { rule: { values, error: { message: err.message, param: formParam(err.param, values) } } }, err.status);
  };

  r.get('/', allow('fraud.manage'), async (req, res) => show(req, res));

  r.post('/rules', allow('fraud.manage'), ctx.action(async (req, res) => {
    const v = fieldsOf(req);
    const input = validate(CreateFraudRule, { name: v.name ?? '', action: v.action, conditions: conditionsOf(v) });
    await createRule(s, ctx.owner(res), input, caller(req, res));
    return { redirect: `${FRAUD_PATH}?done=rule_created` };
  }, ruleFailed));

  // "Try a rule": nothing changes; the draft comes back with its count (a replay goes to the page).
  r.post('/rules/try', allow('fraud.manage'), ctx.action(async (req, res) => {
    const v = fieldsOf(req);
    const draft = validate(TryFraudRule, { action: v.action, conditions: conditionsOf(v) });
    const trial = await tryRule(s.sql, ctx.owner(res), draft);
    return { show: await view(req, res, { rule: emptyForm(v), trial }), replay: FRAUD_PATH };
  }, ruleFailed));

  const ruleId = (req: Request) => pathId('frl', 'fraud_rule', String(req.params.id));
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    r.post(`/rules/:id/${verb}`, allow('fraud.manage'), ctx.action(async (req, res) => {
      await updateRule(s, ctx.owner(res), ruleId(req), validate(UpdateFraudRule, { enabled }), caller(req, res));
      return { redirect: `${FRAUD_PATH}?done=rule_updated` };
    }));
  }
  r.post('/rules/:id/delete', allow('fraud.manage'), ctx.action(async (req, res) => {
    await deleteRule(s, ctx.owner(res), ruleId(req), caller(req, res));
    return { redirect: `${FRAUD_PATH}?done=rule_deleted` };
  }));

  r.post('/lists', allow('fraud.manage'), ctx.action(
    async (req, res) => {
      const v = fieldsOf(req);
      const input = validate(CreateFraudListItem, { kind: v.kind, value: v.value ?? '', note: v.note?.trim() ? v.note.trim() : null });
      await createListItem(s, ctx.owner(res), input, caller(req, res));
      return { redirect: `${FRAUD_PATH}?done=item_added` };
    },
    async (req, res, err) => show(req, res, { item: { values: fieldsOf(req), error: { message: err.message, param: err.param } } }, err.status),
  ));
  r.post('/lists/:id/delete', allow('fraud.manage'), ctx.action(async (req, res) => {
    await deleteListItem(s, ctx.owner(res), pathId('fli', 'fraud_list_item', String(req.params.id)), caller(req, res));
    return { redirect: `${FRAUD_PATH}?done=item_removed` };
  }));

  for (const decision of ['approve', 'refuse'] as const) {
    r.post(`/reviews/:id/${decision}`, allow('fraud.manage'), ctx.action(async (req, res) => {
      const id = pathId('pay', 'payment', String(req.params.id));
      const p = await decideReview(s, ctx.owner(res), id, decision, ctx.actor(req, res), req.log);
      const done = p.review_status === 'approved' ? 'review_approved' : p.review_status === 'approving' || p.review_status === 'refusing' ? 'review_pending' : 'review_refused';
      return { redirect: `/dashboard/payments/${id}?done=${done}#fraud` };
    }));
  }
  return r;
}
