import type { Request, Response } from 'express';
import { findBadText, paramName, textProblem, type TextProblem } from '../lib/validate.ts';
import { sendHtml } from './html.ts';
import { messagePage } from './layout.ts';

const WHAT: Record<TextProblem, string> = {
  nul: 'a NUL character',
  surrogate: 'text that is not valid Unicode',
};

/**
 * A form field or query parameter of a hosted page as the string that was sent: '' when it is
 * absent or not a single string (a repeated parameter). Never trimmed here: a page that ignores
 * the spaces around what a payer typed trims those fields itself.
 */
export const formText = (v: unknown): string => (typeof v === 'string' ? v : '');

function without(input: object, shown: readonly string[]): object {
  const rest: Record<string, unknown> = { ...input };
  for (const name of shown) delete rest[name];
  return rest;
}

/**
 * Query strings and form fields of the hosted pages get the check API bodies get: no NUL, no
 * unpaired surrogate (Postgres cannot store either). The first such parameter is answered with a
 * readable 400 page naming it, and true is returned. The `shown` form fields are left to the
 * page, which names the problem beside the input (see unreadableFields).
 */
export function refuseUnreadableInput(req: Request, res: Response, shown: readonly string[] = []): boolean {
  const inputs: Array<[string, unknown]> = [
    ['link parameter', req.query],
    ['form field', req.body && typeof req.body === 'object' ? without(req.body as object, shown) : undefined],
  ];
  for (const [kind, input] of inputs) {
    const bad = findBadText(input);
    if (!bad) continue;
    const name = paramName(bad.path);
    req.log.info({ param: name, problem: bad.problem }, 'hosted page input refused');
    sendHtml(res, 400, messagePage('Please check what you entered', `The ${kind} “${name}” contains ${WHAT[bad.problem]}, which cannot be accepted. Go back, correct it and try again.`));
    return true;
  }
  return false;
}

/** The per-field messages for typed fields holding a NUL or invalid Unicode; null when all are fine. */
export function unreadableFields<K extends string>(fields: Record<K, string>, labels: Record<K, string>): Partial<Record<K, string>> | null {
  const errors: Partial<Record<K, string>> = {};
  for (const key of Object.keys(fields) as K[]) {
    const problem = textProblem(fields[key]);
    if (problem) errors[key] = `${labels[key]} contains ${WHAT[problem]}, which cannot be accepted. Remove it and try again.`;
  }
  return Object.keys(errors).length ? errors : null;
}
