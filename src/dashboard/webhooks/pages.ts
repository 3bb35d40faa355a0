import { Router, type Request, type Response } from 'express';
import { resourceMissing, type ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { formText } from '../../pages/index.ts';
import { SendTestEvent } from '../../test-events/schema.ts';
import { sendTestEvent } from '../../test-events/service.ts';
import { CreateEndpoint, ListEndpointDeliveries, ListEndpoints, RetryFailed, RotateSecret, UpdateEndpoint } from '../../webhooks/schema.ts';
import * as service from '../../webhooks/service.ts';
import * as store from '../../webhooks/store.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { checked, fieldsOf, listOf, listQueryOf, optional, orNull, parseUtcDateTime, utcDateTimeText } from '../forms.ts';
import { alertBox, toPage, type FormState } from '../widgets.ts';
import {
  deliveriesPage,
  deliveriesPath,
  endpointDetail,
  endpointForm,
  endpointPath,
  endpointsList,
  secretShown,
  withoutSecrets,
  type EndpointView,
} from './views.ts';

const DONE = {
  updated: 'Changes saved.',
  deleted: 'Endpoint deleted.',
  paused: 'Endpoint paused: events are held and sent when you resume it.',
  resumed: 'Endpoint resumed: the events held meanwhile are being sent.',
  test_sent: 'Test event sent. Its delivery is listed below.',
};

/** The notice of retry-failed: how many deliveries it made, from the redirect's query. */
/** The rate limit field: empty is none (null); digits a number; anything else goes to the schema as is, which names it. */
const rateLimitOf = (v: string | undefined): unknown => {
  const text = v?.trim() ?? '';
  if (text === '') return null;
  return /^\d{1,6}$/.test(text) ? Number(text) : text;
};

function retriedNotice(req: Request) {
  const n = formText(req.query.retried);
  if (!/^\d{1,6}$/.test(n)) return alertBox('success', null);
  const count = Number(n);
  const more = req.query.more === '1' ? ' More failed deliveries remain: retry again to send them too.' : '';
  if (count === 0) return alertBox('info', `No failed delivery to retry since that time: nothing was sent.${more}`);
  return alertBox('success', `${count === 1 ? '1 failed delivery was' : `${count} failed deliveries were`} sent again. The new deliveries are listed below.${more}`);
}

/**
 * /dashboard/webhooks: the endpoints (list, add with the secret shown once, edit, pause and resume,
 * rotate the secret, delete), a test event, and an endpoint's deliveries with "retry all failed
 * since…", through the services and schemas of /v1/webhook-endpoints.
 */
export function webhooksPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const endpointId = (id: string) => pathId('we', 'webhook_endpoint', id);
  const load = async (res: Response, id: string): Promise<EndpointView> => {
    const row = await store.findEndpoint(s.sql, ctx.owner(res), endpointId(id));
    if (!row) throw resourceMissing('webhook_endpoint', id);
    return withoutSecrets(row);
  };

  r.get('/', allow('developers.read'), async (req, res) => {
    const q = parseListQuery(ListEndpoints, listQueryOf(req));
    const page = toPage((await store.listEndpoints(s.sql, ctx.owner(res), q)).map(withoutSecrets), q);
    await ctx.render(req, res, () => endpointsList(page, !!(q.starting_after || q.ending_before), doneNotice(req, DONE)));
  });

  r.get('/new', allow('webhooks.manage'), async (req, res) => {
    await ctx.render(req, res, (f) => endpointForm(null, { values: {} }, [], f));
  });

  const showForm = (e: EndpointView | null) => async (req: Request, res: Response, err: ApiError) =>
    ctx.render(req, res, (f) => endpointForm(e, { values: fieldsOf(req), error: err }, listOf(req, 'enabled_events'), f), err.status);

  // The answer shows the secret once; a replay of the form (same key) goes to the endpoint's page.
  r.post(
    '/', allow('webhooks.manage'),
    ctx.action(
      async (req, res) => {
        const v = fieldsOf(req);
        const input = validate(CreateEndpoint, {
          url: (v.url ?? '').trim(),
          enabled_events: listOf(req, 'enabled_events'),
          description: optional(v.description),
          rate_limit: rateLimitOf(v.rate_limit),
          ordered: checked(v.ordered),
        });
        const row = await service.createEndpoint(s, ctx.owner(res), input, ctx.actor(req, res));
        req.log.info({ component: 'dashboard', endpoint: row.id }, 'dashboard webhook endpoint created');
        return { show: () => secretShown(withoutSecrets(row), row.secret, 'created'), replay: endpointPath(row.id) };
      },
      showForm(null),
    ),
  );

  /** The endpoint's page, with the test form as it came back (`test`), if it did. */
  const detail = async (req: Request, res: Response, e: EndpointView, test: FormState, status = 200) => {
    const recent = await service.endpointDeliveries(s, ctx.owner(res), e.id, { limit: 5 });
    const stats = await service.endpointStats(s, ctx.owner(res), e.id);
    await ctx.render(
      req,
      res,
      (f) => endpointDetail({ e, recent: recent.rows.slice(0, 5), attempts: recent.attempts, stats, notice: doneNotice(req, DONE), confirm: formText(req.query.confirm), test }, f),
      status,
    );
  };

  r.get('/:id', allow('developers.read'), async (req, res) => {
    await detail(req, res, await load(res, req.params.id), { values: {} });
  });

  r.get('/:id/edit', allow('webhooks.manage'), async (req, res) => {
    const e = await load(res, req.params.id);
    const values = { url: e.url, description: e.description ?? '', rate_limit: e.rate_limit === null ? '' : String(e.rate_limit), ordered: e.ordered ? 'on' : '' };
    await ctx.render(req, res, (f) => endpointForm(e, { values }, e.enabled_events, f));
  });

  r.post('/:id', allow('webhooks.manage'), async (req, res, next) => {
    const e = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const v = fieldsOf(req);
        const patch = validate(UpdateEndpoint, {
          url: (v.url ?? '').trim(),
          description: orNull(v.description),
          enabled_events: listOf(req, 'enabled_events'),
          rate_limit: rateLimitOf(v.rate_limit),
          ordered: checked(v.ordered),
        });
        await service.updateEndpoint(s, ctx.owner(res), e.id, patch, ctx.actor(req, res));
        return { redirect: `${endpointPath(e.id)}?done=updated` };
      },
      showForm(e),
    )(req, res, next);
  });

  for (const [action, active] of [['pause', false], ['resume', true]] as const) {
    r.post(
      `/:id/${action}`, allow('webhooks.manage'),
      ctx.action(async (req, res) => {
        const id = endpointId(req.params.id as string);
        await service.updateEndpoint(s, ctx.owner(res), id, validate(UpdateEndpoint, { is_active: active }), ctx.actor(req, res));
        return { redirect: `${endpointPath(id)}?done=${active ? 'resumed' : 'paused'}` };
      }),
    );
  }

  r.post(
    '/:id/rotate-secret', allow('webhooks.manage'),
    ctx.action(async (req, res) => {
      const id = endpointId(req.params.id as string);
      validate(RotateSecret, {});
      const row = await service.rotateSecret(s, ctx.owner(res), id, ctx.actor(req, res));
      req.log.info({ component: 'dashboard', endpoint: row.id }, 'dashboard webhook secret rotated');
      return { show: () => secretShown(withoutSecrets(row), row.secret, 'rotated'), replay: endpointPath(row.id) };
    }),
  );

  r.post(
    '/:id/delete', allow('webhooks.manage'),
    ctx.action(async (req, res) => {
      const id = endpointId(req.params.id as string);
      await service.deleteEndpoint(s, ctx.owner(res), id, ctx.actor(req, res));
      return { redirect: '/dashboard/webhooks?done=deleted' };
    }),
  );

  r.post('/:id/test', allow('webhooks.manage'), async (req, res, next) => {
    const e = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const input = validate(SendTestEvent, { type: optional(fieldsOf(req).type) });
        await sendTestEvent(s, ctx.owner(res), e.id, input);
        return { redirect: `${deliveriesPath(e.id)}?done=test_sent` };
      },
      (rq, rs, err) => detail(rq, rs, e, { values: fieldsOf(rq), error: err }, err.status),
    )(req, res, next);
  });

  /** The deliveries page; `retry` is the retry form as it came back, if it did. */
  const deliveries = async (req: Request, res: Response, e: EndpointView, retry: FormState | null, status = 200) => {
    const q = parseListQuery(ListEndpointDeliveries, req.method === 'GET' ? listQueryOf(req, ['retried', 'more']) : {});
    const page = await service.endpointDeliveries(s, ctx.owner(res), e.id, q);
    const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
    const notice = req.method === 'GET' ? (req.query.retried !== undefined ? retriedNotice(req) : doneNotice(req, DONE)) : alertBox('success', null);
    await ctx.render(
      req,
      res,
      (f) =>
        deliveriesPage(
          {
            e,
            page: toPage(page.rows, q),
            attempts: page.attempts,
            status: q.status,
            wasCursor: !!(q.starting_after || q.ending_before),
            notice,
            retry: retry ?? { values: { since: utcDateTimeText(dayAgo) } },
          },
          f,
        ),
      status,
    );
  };

  r.get('/:id/deliveries', allow('developers.read'), async (req, res) => {
    await deliveries(req, res, await load(res, req.params.id), null);
  });

  r.post('/:id/retry-failed', allow('webhooks.manage'), async (req, res, next) => {
    const e = await load(res, req.params.id);
    return ctx.action(
      async () => {
        const since = parseUtcDateTime(fieldsOf(req).since, 'since');
        const input = validate(RetryFailed, { since: since ?? undefined });
        const done = await service.retryFailed(s, ctx.owner(res), e.id, input.since);
        req.log.info({ component: 'dashboard', endpoint: e.id, deliveries: done.rows.length }, 'dashboard failed deliveries retried');
        return { redirect: `${deliveriesPath(e.id)}?retried=${done.rows.length}${done.hasMore ? '&more=1' : ''}` };
      },
      (rq, rs, err) => deliveries(rq, rs, e, { values: fieldsOf(rq), error: err }, err.status),
    )(req, res, next);
  });

  return r;
}
