import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createHash, randomBytes } from 'node:crypto';
import { canonical } from '../idempotency/middleware.ts';
import { claimKey, findKey, releaseKey, saveResponse, type KeyRef } from '../idempotency/store.ts';
import { ApiError } from '../lib/errors.ts';
import type { Owner } from '../lib/owner.ts';
import { clientAddress, formText, sendHtml, type Csrf } from '../pages/index.ts';
import type { AuditActor } from '../audit/store.ts';
import type { Services } from '../services.ts';
import { can, type Permission } from '../team/roles.ts';
import { shellPage, type ShellPage } from './layout.ts';
import type { SessionRow } from './store.ts';
import { alertBox, formsOf, type Forms } from './widgets.ts';

/** What the session gate leaves on `res.locals` for every signed-in page. */
export interface DashLocals {
  session?: SessionRow;
  sessionTokenHash?: Buffer;
}
export const dashLocals = (res: Response): DashLocals => res.locals as DashLocals;

/** The CSRF scope of a signed-in user's forms: their session. */
export const sessionScope = (session: SessionRow): string => `dashboard:${session.token_hash.toString('hex')}`;

const FORM_KEY = /^[A-Za-z0-9_-]{22}$/;

/** What a dashboard action did: where to go next, or a page to show once (a secret) and where a replay goes. */
export type Outcome = { redirect: string } | { show: (f: Forms) => ShellPage; status?: number; replay: string };

/**
 * What every section of the dashboard is given (pages.ts builds it once): the services, the
 * signed-in session of a request, rendering in the shell, and `action`, the one way a form changes
 * state: CSRF checked, the mode it was opened in checked, and run once per idempotency key, as the
 * API's Idempotency-Key runs a POST once.
 */
export interface DashContext {
  s: Services;
  session(res: Response): SessionRow;
  /** The session's account and mode: every query of a page filters on both. */
  owner(res: Response): Owner;
  /** Sends a page of the shell; `page` is given what its forms need. */
  render(req: Request, res: Response, page: (f: Forms) => ShellPage, status?: number): Promise<void>;
  /**
   * A POST handler for a form that changes state. `failed` shows the form again with an API error
   * (a 4xx): without it the error page says what was wrong.
   */
  /** Who a dashboard request acts as, for the audit log: the signed-in user and their address. */
  actor(req: Request, res: Response): AuditActor;
  action(run: (req: Request, res: Response, se: SessionRow) => Promise<Outcome>, failed?: (req: Request, res: Response, err: ApiError) => Promise<void>): RequestHandler;
}

export const FORM_EXPIRED = 'This form has expired. Reload the page and try again.';

/** A problem with the submission itself, answered with a page in the shell. */
export class FormRefused extends Error {
  readonly status: number;
  readonly heading: string;
  constructor(status: number, heading: string, message: string) {
    super(message);
    this.status = status;
    this.heading = heading;
  }
}

export function dashContext(s: Services, csrf: Csrf, script: string): DashContext {
  const session = (res: Response) => {
    const se = dashLocals(res).session;
    if (!se) throw new Error('dashboard page reached without a session');
    return se;
  };
  const owner = (res: Response): Owner => {
    const se = session(res);
    return { accountId: se.account_id, livemode: se.livemode };
  };
  const newKey = () => randomBytes(16).toString('base64url');
  const render = async (req: Request, res: Response, page: (f: Forms) => ShellPage, status = 200) => {
    const se = session(res);
    const token = await csrf.token(req, res, sessionScope(se));
    sendHtml(res, status, shellPage(se, token, script, page(formsOf(token, se.livemode, newKey)), { emailUnset: s.mailer.kind === 'log' }));
  };

  const fingerprint = (req: Request) => {
    const { _csrf: _c, idempotency_key: _k, ...fields } = (req.body ?? {}) as Record<string, unknown>;
    return createHash('sha256').update(`POST ${req.baseUrl}${req.path}\n${canonical(fields)}`).digest('hex');
  };

  const action: DashContext['action'] = (run, failed) => async (req, res) => {
    const se = session(res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!(await csrf.verify(req, sessionScope(se)))) throw new FormRefused(403, 'This form has expired', FORM_EXPIRED);
    // A form opened in one mode is never applied to the other (the mode may have changed in another tab).
    const mode = formText(body.form_mode);
    if (mode !== (se.livemode ? 'live' : 'test')) {
      throw new FormRefused(
        409,
        'The mode has changed',
        `This form was opened while viewing ${mode === 'live' ? 'live' : 'test'} data; you are now viewing ${se.livemode ? 'live' : 'test'} data. Nothing was changed: open the form again.`,
      );
    }
    const key = formText(body.idempotency_key);
    if (!FORM_KEY.test(key)) throw new FormRefused(400, 'This form has expired', FORM_EXPIRED);
    const ref: KeyRef = { accountId: se.account_id, livemode: se.livemode, key: `dashboard:${key}` };
    const fp = fingerprint(req);
    if (!(await claimKey(s.sql, ref, fp, req.id))) {
      const prior = await findKey(s.sql, ref);
      if (!prior || prior.status === null) throw new FormRefused(409, 'Still working', 'This form was just submitted and is still being processed. Wait a moment, then reload the page.');
      if (prior.fingerprint !== fp) throw new FormRefused(409, 'This form was already submitted', 'This form was already submitted with other values. Open it again to make another change.');
      // The same submission again (a double click, a reload of the answer): where the first one went.
      return res.redirect(303, (prior.response as { location: string }).location);
    }
    let outcome: Outcome;
    try {
      outcome = await run(req, res, se);
    } catch (err) {
      await releaseKey(s.sql, ref).catch((e: unknown) => req.log.warn({ err: e }, 'could not release a dashboard form key'));
      if (err instanceof ApiError && err.status < 500 && failed) return failed(req, res, err);
      throw err;
    }
    const location = 'redirect' in outcome ? outcome.redirect : outcome.replay;
    await saveResponse(s.sql, ref, 303, { location });
    if ('redirect' in outcome) return res.redirect(303, outcome.redirect);
    await render(req, res, outcome.show, outcome.status ?? 200);
  };

  const actor = (req: Request, res: Response): AuditActor => {
    const se = session(res);
    return { type: 'user', id: se.user_id, label: se.email, ip: clientAddress(req) };
  };

  return { s, session, owner, render, actor, action };
}

/** A route's guard: the permission it declares, readable by the tests that walk the routers. */
export type Guard = RequestHandler<any> & { readonly permission: Permission };

/** Whom each permission is for, in the words of the refusal page. */
const WHAT: Record<Permission, string> = {
  read: 'viewing records',
  'developers.read': 'the developer pages (events, webhooks, API keys)',
  export: 'exports',
  'customers.write': 'changing customers',
  'payments.write': 'changing payment links, checkout sessions and invoices',
  'refunds.create': 'refunds',
  'disputes.manage': 'disputes',
  'fraud.manage': 'fraud rules and reviews',
  'keys.manage': 'managing API keys',
  'webhooks.manage': 'managing webhook endpoints',
  'settings.manage': 'the account settings',
  'team.manage': 'managing the team',
  'refunds.limit': "the support role's refund limit",
  'audit.read': 'the audit log',
};

export const ROLE_REFUSED = 'Your role does not allow this';

/**
 * The first handler of every dashboard route (issue 25): the session's role must hold the
 * permission, else a 403 page, before anything is read or changed. The role is read with the
 * session on every request, so a change of role applies to the next request.
 */
export function allow(permission: Permission): Guard {
  const guard = (_req: Request, res: Response, next: NextFunction) => {
    const se = dashLocals(res).session;
    if (!se) throw new Error('dashboard route reached without a session');
    if (!can(se.role, permission)) {
      throw new FormRefused(403, ROLE_REFUSED, `Your role (${se.role}) does not allow ${WHAT[permission]}. An owner or administrator of the account can change your role.`);
    }
    next();
  };
  return Object.assign(guard, { permission });
}

/**
 * The notice of a page reached after an action (`?done=<code>`), from the page's own table of
 * messages: a code it does not know shows nothing.
 */
export function doneNotice(req: Request, messages: Record<string, string>): ReturnType<typeof alertBox> {
  const code = formText(req.query.done);
  return alertBox('success', Object.hasOwn(messages, code) ? messages[code] : null);
}
