import { Router, type Request, type Response } from 'express';
import { flattenCreated, ListEvents } from '../../events/schema.ts';
import { findEvent, listEvents, type EventRow } from '../../events/store.ts';
import { ApiError, resourceMissing } from '../../lib/errors.ts';
import { isId } from '../../lib/ids.ts';
import type { Owner } from '../../lib/owner.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { endpointsOfEvent, subscribes } from '../../webhooks/deliveries.ts';
import { ListDeliveries, MAX_ENDPOINTS, ResendEvent } from '../../webhooks/schema.ts';
import { eventDeliveries, resendEvent } from '../../webhooks/service.ts';
import * as endpoints from '../../webhooks/store.ts';
import { allow, type DashContext } from '../context.ts';
import { fieldsOf, listQueryOf, optional } from '../forms.ts';
import { toPage, type FormState } from '../widgets.ts';
import { eventDetail, eventPath, eventsList, isSample, resendNotice, type EventFilterValues } from './views.ts';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A day typed in the filter form (`2026-11-25`, read as UTC) as the API's Unix-seconds bound:
 * its first second for `from`, its last for `to`. A day that does not exist is a 400 naming the field.
 */
function dayBound(value: unknown, name: 'from' | 'to'): { text: string; seconds: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const text = typeof value === 'string' ? value.trim() : '';
  const m = DAY.exec(text);
  const ms = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) {
    throw new ApiError('parameter_invalid', `Invalid ${name}: enter a day like 2026-11-25.`, name);
  }
  const seconds = ms / 1000 + (name === 'to' ? 86_399 : 0);
  return { text, seconds: String(seconds) };
}

/**
 * The list's query as the API reads it: `type`, `created[gte]`, `created[lte]` and the cursors go
 * through the API's own schema (so a bad filter is a 400 naming it); the form's `from` and `to`
 * days become the `created` bounds first.
 */
function listQuery(req: Request) {
  const { from, to, ...rest } = flattenCreated(listQueryOf(req));
  const f = dayBound(from, 'from');
  const t = dayBound(to, 'to');
  if (f) rest['created[gte]'] = f.seconds;
  if (t) rest['created[lte]'] = t.seconds;
  const q = parseListQuery(ListEvents, rest);
  const shown: EventFilterValues = { type: q.type, from: f?.text, to: t?.text };
  const keep: Record<string, string | undefined> = {
    type: q.type,
    from: f?.text,
    to: t?.text,
    // Bounds given in the API's spelling (a link from elsewhere) are kept as they came.
    'created[gte]': f ? undefined : q['created[gte]']?.toString(),
    'created[lte]': t ? undefined : q['created[lte]']?.toString(),
  };
  return { q, shown, keep };
}

/**
 * /dashboard/events: the event log (filter by type and day range, newest first) and an event's
 * page: its payload, every delivery with its attempts, and Resend, through the same functions as
 * GET /v1/events, GET /v1/events/:id/deliveries and POST /v1/events/:id/resend.
 */
export function eventsPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const eventId = (id: string) => pathId('evt', 'event', id);
  const load = async (o: Owner, id: string): Promise<EventRow> => {
    const row = await findEvent(s.sql, o, eventId(id));
    if (!row) throw resourceMissing('event', id);
    return row;
  };

  r.get('/', allow('developers.read'), async (req, res) => {
    const { q, shown, keep } = listQuery(req);
    const rows = await listEvents(s.sql, ctx.owner(res), q, { type: q.type, createdGte: q['created[gte]'], createdLte: q['created[lte]'] });
    await ctx.render(req, res, () => eventsList(toPage(rows, q), shown, keep, !!(q.starting_after || q.ending_before)));
  });

  /** The event page, with the resend form as it came back (`form`), if it did. */
  const show = async (req: Request, res: Response, event: EventRow, form: FormState, status = 200) => {
    const o = ctx.owner(res);
    const cursor = req.method === 'GET' ? req.query : {};
    const dq = parseListQuery(ListDeliveries, { starting_after: cursor.starting_after, ending_before: cursor.ending_before });
    const [page, all] = await Promise.all([eventDeliveries(s, o, event.id, dq), endpoints.listEndpoints(s.sql, o, { limit: MAX_ENDPOINTS * 2 })]);
    const list = all.slice(0, MAX_ENDPOINTS * 2).reverse(); // oldest first: the order they were added
    // A test event's sample goes again only to the endpoint it was sent to (resendEvent's rule).
    const sample = isSample(event);
    const sentTo = sample ? new Set(await endpointsOfEvent(s.sql, event.id)) : null;
    const targets = sentTo ? list.filter((e) => sentTo.has(e.id)) : list;
    const view = {
      event,
      sample,
      endpoints: list,
      targets,
      subscribed: sentTo ? targets.length : list.filter((e) => subscribes(e, event.type)).length,
      deliveries: { page: toPage(page.rows, dq), attempts: page.attempts, wasCursor: !!(dq.starting_after || dq.ending_before) },
      notice: resendNotice(req.method === 'GET' ? req.query : {}, event),
      form,
    };
    await ctx.render(req, res, (f) => eventDetail(view, f), status);
  };

  r.get('/:id', allow('developers.read'), async (req, res) => {
    const event = await load(ctx.owner(res), req.params.id);
    await show(req, res, event, { values: {} });
  });

  r.post(
    '/:id/resend', allow('webhooks.manage'),
    ctx.action(
      async (req, res) => {
        const o = ctx.owner(res);
        const id = eventId(req.params.id as string);
        const v = fieldsOf(req);
        const one = v.to === 'one';
        if (one && !optional(v.endpoint_id)) throw new ApiError('parameter_missing', 'Choose the endpoint to send the event to.', 'endpoint_id');
        const { endpoint_id } = validate(ResendEvent, { endpoint_id: one ? optional(v.endpoint_id) : undefined });
        // As POST /v1/events/:id/resend: an id that cannot be an endpoint's is missing, like another account's.
        if (endpoint_id !== undefined && !isId('we', endpoint_id)) throw resourceMissing('webhook_endpoint', endpoint_id, 'endpoint_id');
        const rows = await resendEvent(s, o, id, endpoint_id);
        const paused = rows.filter((d) => d.status === 'PAUSED').length;
        req.log.info({ component: 'dashboard', event: id, deliveries: rows.length, endpoint: endpoint_id ?? null }, 'dashboard event resent');
        return { redirect: `${eventPath(id)}?done=resent&count=${rows.length}&paused=${paused}#deliveries` };
      },
      async (req, res, err) => {
        // A problem with the chosen endpoint is shown beside the choice; anything else (the event
        // itself missing) is the error page.
        if (err.param !== 'endpoint_id') throw err;
        const event = await load(ctx.owner(res), req.params.id as string);
        await show(req, res, event, { values: fieldsOf(req), error: err }, err.status);
      },
    ),
  );

  return r;
}
