import { permissionsOf, RESOURCE_NAMES } from '../../auth/scopes.ts';
import { Router, type Request, type Response } from 'express';
import { createKey, revokeKey, rollKey, type KeyCaller } from '../../auth/service.ts';
import { CreateApiKey, ListApiKeys, RevokeApiKey, RollApiKey } from '../../auth/schema.ts';
import * as keys from '../../auth/store.ts';
import { resourceMissing, type ApiError } from '../../lib/errors.ts';
import { parseListQuery } from '../../lib/pagination.ts';
import { pathId, validate } from '../../lib/validate.ts';
import { html } from '../../pages/html.ts';
import { formText } from '../../pages/index.ts';
import { allow, doneNotice, type DashContext } from '../context.ts';
import { fieldsOf, listQueryOf } from '../forms.ts';
import type { SessionRow } from '../store.ts';
import { toPage } from '../widgets.ts';
import { keyDetail, keyPath, keysList, newKeyPage, OVERLAPS } from './views.ts';

const BASE = '/dashboard/api-keys';
const DONE = { revoked: 'Key revoked. The API refuses it within a few seconds.' };

/** A number typed in a form as the API's JSON would carry it: digits become a number, anything else stays text (and the API's schema names it). */
const wholeNumber = (v: string | undefined): unknown => (v !== undefined && /^\d{1,9}$/.test(v.trim()) ? Number(v.trim()) : v);

/**
 * /dashboard/api-keys: the keys of the session's account and mode. List, create, roll and revoke
 * through the functions and schemas of /v1/api-keys (src/auth/service.ts). A new secret is shown
 * once, on the answer to the form that made it; a replay of that form goes to the list.
 */
export function apiKeysPages(ctx: DashContext): Router {
  const r = Router();
  const { s } = ctx;
  const keyId = (id: string) => pathId('key', 'api_key', id);
  /** The dashboard user acts with no API key: the rules about the calling key do not apply. */
  const caller = (req: Request, se: SessionRow, res: Response): KeyCaller => ({ log: req.log.child({ component: 'dashboard', user: se.user_id }), actor: ctx.actor(req, res) });
  const load = async (res: Response, id: string) => {
    const row = await keys.findApiKey(s.sql, ctx.owner(res), keyId(id));
    if (!row) throw resourceMissing('api_key', id);
    return row;
  };

  r.get('/', allow('developers.read'), async (req, res) => {
    const q = parseListQuery(ListApiKeys, listQueryOf(req));
    const page = toPage(await keys.listApiKeys(s.sql, ctx.owner(res), q), q);
    await ctx.render(req, res, (f) => keysList(page, !!(q.starting_after || q.ending_before), f, doneNotice(req, DONE)));
  });

  r.post(
    '/', allow('keys.manage'),
    ctx.action(async (req, res, se) => {
      const v = fieldsOf(req);
      // The same input as POST /v1/api-keys: no permissions (full), "read_only", or one access per resource.
      const permissions =
        v.restricted === 'read_only'
          ? 'read_only'
          : v.restricted === 'custom'
            ? Object.fromEntries(RESOURCE_NAMES.map((r) => [r, v[`perm_${r}`] ?? 'none']))
            : undefined;
      const input = validate(CreateApiKey, permissions === undefined ? {} : { permissions });
      const { row, secret } = await createKey(s.sql, ctx.owner(res), caller(req, se, res), permissionsOf(input.permissions));
      return { show: () => newKeyPage(row, secret, null), replay: BASE };
    }),
  );

  r.get('/:id', allow('developers.read'), async (req, res) => {
    const k = await load(res, req.params.id);
    const confirm = formText(req.query.confirm);
    await ctx.render(req, res, (f) => keyDetail(k, f, doneNotice(req, DONE), { confirm: confirm === 'roll' || confirm === 'revoke' ? confirm : null }));
  });

  r.post(
    '/:id/roll', allow('keys.manage'),
    ctx.action(
      async (req, res, se) => {
        const id = keyId(String(req.params.id));
        const { expires_in } = validate(RollApiKey, { expires_in: wholeNumber(fieldsOf(req).expires_in) });
        const { row, secret } = await rollKey(s.sql, ctx.owner(res), id, expires_in, caller(req, se, res));
        const old = await keys.findApiKey(s.sql, ctx.owner(res), id);
        return { show: () => newKeyPage(row, secret, old ?? null), replay: BASE };
      },
      async (req, res, err: ApiError) => {
        const k = await load(res, String(req.params.id));
        // A value that is not one of the choices shows the 1-hour overlap again, never "now".
        const typed = fieldsOf(req).expires_in;
        const values = { expires_in: OVERLAPS.some((o) => o.value === typed) ? typed! : '3600' };
        await ctx.render(req, res, (f) => keyDetail(k, f, html``, { confirm: 'roll', roll: { values, error: err } }), err.status);
      },
    ),
  );

  r.post(
    '/:id/revoke', allow('keys.manage'),
    ctx.action(async (req, res, se) => {
      const id = keyId(String(req.params.id));
      validate(RevokeApiKey, fieldsOf(req));
      await revokeKey(s.sql, ctx.owner(res), id, caller(req, se, res));
      return { redirect: `${keyPath(id)}?done=revoked` };
    }),
  );

  return r;
}
