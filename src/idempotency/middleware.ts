import type { RequestHandler, Response } from 'express';
import { createHash } from 'node:crypto';
import type { Sql } from '../db/sql.ts';
import { ApiError } from '../lib/errors.ts';
import { claimKey, findKey, releaseKey, saveResponse, type KeyRef } from './store.ts';

/**
 * Parameters in a canonical JSON form (object keys sorted), so key order does not change the
 * fingerprint. Iterative: a body nested deeper than the call stack must not throw (a RangeError
 * here would be a 500); the output is the same as the recursive form it replaced, so keys stored
 * before keep matching.
 */
export function canonical(root: unknown): string {
  const out: string[] = [];
  // Text to write as is, or a value still to encode; popped from the end, so pushed in reverse.
  const todo: Array<string | { value: unknown }> = [{ value: root }];
  while (todo.length) {
    const item = todo.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const { value } = item;
    if (Array.isArray(value)) {
      out.push('[');
      todo.push(']');
      for (let i = value.length - 1; i >= 0; i--) {
        todo.push({ value: value[i] });
        if (i > 0) todo.push(',');
      }
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push('{');
      todo.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        todo.push({ value: entries[i]![1] });
        todo.push(`${i > 0 ? ',' : ''}${JSON.stringify(entries[i]![0])}:`);
      }
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}

/**
 * The path as Express routes it: case-insensitive, and one trailing slash optional (its defaults,
 * `case sensitive routing` and `strict routing` off), so `/V1/Customers/` is the same request as
 * `/v1/customers`. Ids are lowercase by construction, so folding case never turns one valid
 * request into another.
 */
export function routedPath(originalUrl: string): string {
  const path = originalUrl.split('?')[0]!.toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

const fingerprint = (method: string, path: string, body: unknown) =>
  createHash('sha256').update(`${method} ${routedPath(path)}\n${canonical(body ?? {})}`).digest('hex');

/**
 * `Idempotency-Key` on POST, as Stripe does it: the first answer (status and body) is kept for
 * KEY_TTL (24 h, store.ts) per account, mode and key and replayed for an identical retry; the key
 * with another request is a 400; a retry while the first is still running is a 409 and never a
 * second record.
 */
export function idempotency(sql: Sql): RequestHandler {
  const keyed: RequestHandler = async (req, res, next) => {
    const key = req.get('Idempotency-Key')!;
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 characters long.');
    }
    const ref: KeyRef = { accountId: req.auth.accountId, livemode: req.auth.livemode, key };
    const fp = fingerprint(req.method, req.originalUrl, req.body);

    if (!(await claimKey(sql, ref, fp, req.id))) {
      const prior = await findKey(sql, ref);
      if (!prior) throw new ApiError('idempotency_key_in_progress', 'This Idempotency-Key is in use; retry shortly.');
      if (prior.fingerprint !== fp) {
        throw new ApiError(
          'idempotency_key_reused',
          'Keys for idempotent requests can only be used with the same method, path and parameters they were first used with.',
        );
      }
      if (prior.status === null) {
        throw new ApiError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      }
      res.setHeader('Idempotent-Replayed', 'true');
      res.setHeader('Original-Request', prior.request_id);
      res.status(prior.status).json(prior.response);
      return;
    }

    captureResponse(res, async (status, body) => {
      // A 5xx committed nothing: free the key so that a retry runs the request again.
      if (status >= 500) await releaseKey(sql, ref);
      else await saveResponse(sql, ref, status, body);
    });
    next();
  };
  // Most requests carry no key: they pass synchronously, without a promise (issue 28.2).
  return (req, res, next) => (req.method !== 'POST' || req.headers['idempotency-key'] === undefined ? next() : keyed(req, res, next));
}

/** Stores the answer before it is sent, so that a retry right after it sees the stored answer. */
function captureResponse(res: Response, store: (status: number, body: unknown) => Promise<void>): void {
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    res.json = send;
    store(res.statusCode, body).then(
      () => send(body),
      (err: unknown) => {
        res.req.log.error({ err }, 'could not store idempotent response');
        send(body);
      },
    );
    return res;
  };
}
