import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { randomFillSync } from 'node:crypto';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './dependencies.ts';
import { ApiError } from './errors.ts';
import { findTooDeep, MAX_BODY_DEPTH } from './validate.ts';

// Random bytes are drawn 3 KB at a time: a randomBytes call per request cost about 2 % of a GET.
const ID_BYTES = 12;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idOffset = idPool.length;

const newRequestId = () => {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  idOffset += ID_BYTES;
  return `req_${idPool.toString('base64url', idOffset - ID_BYTES, idOffset)}`;
};

/** Request-Id header, a child logger per request, and one access-log line when the answer is sent. */
export function requestContext(log: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    req.id = newRequestId();
    req.log = log.child({ reqId: req.id });
    res.setHeader('Request-Id', req.id);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      req.log.info({ method: req.method, path: req.originalUrl.split('?', 1)[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}

const parseJson = express.json({
  limit: '1mb',
  strict: true,
  verify: (req, _res, buf) => {
    (req as express.Request).rawBody = buf;
  },
});

function hasBody(req: express.Request): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/**
 * JSON bodies only, at most 1 MB and MAX_BODY_DEPTH levels deep; anything else is refused in the
 * one error shape. JSON.parse itself copes with any depth; the walks after it (validation, the
 * idempotency fingerprint) need not, so a deep body stops here.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  if (hasBody(req) && !req.is('application/json')) {
    next(new ApiError('content_type_unsupported', 'Request bodies must be JSON: send Content-Type: application/json.'));
    return;
  }
  parseJson(req, res, (err?: unknown) => {
    if (err) return next(err);
    const deep = findTooDeep(req.body, MAX_BODY_DEPTH);
    if (!deep) return next();
    next(new ApiError('parameter_invalid', `The request body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep.`, Array.isArray(req.body) ? undefined : deep[0]));
  });
};

const bodyParserErrors: Record<string, () => ApiError> = {
  'entity.parse.failed': () => new ApiError('body_invalid_json', 'The request body is not valid JSON.'),
  'entity.too.large': () => new ApiError('body_too_large', 'The request body is larger than 1 MB.'),
  'encoding.unsupported': () => new ApiError('content_type_unsupported', 'Unsupported content encoding.'),
  'charset.unsupported': () => new ApiError('content_type_unsupported', 'JSON bodies must be UTF-8.'),
  'request.aborted': () => new ApiError('body_invalid_json', 'The request body was not received completely.'),
  'request.size.invalid': () => new ApiError('body_invalid_json', 'The request body does not match its Content-Length.'),
};

export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApiError('route_not_found', `Unrecognized request URL (${req.method}: ${req.path}).`));
};

/** The one place an error becomes a response. Anything not an ApiError is a 500 and is logged. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  let apiError: ApiError;
  if (err instanceof ApiError) apiError = err;
  else if (err && typeof err === 'object' && 'type' in err && typeof err.type === 'string' && bodyParserErrors[err.type]) {
    apiError = bodyParserErrors[err.type]!();
  } else if (err instanceof URIError || (err && typeof err === 'object' && (err as { status?: number }).status === 400)) {
    apiError = new ApiError('request_malformed', 'The request URL or its parameters are malformed.');
  } else if (isDatabaseUnavailable(err)) {
    // A Postgres restart or outage: nothing was committed, the caller may retry (docs/operations.md).
    (req.log ?? console).warn({ code: (err as { code: string }).code }, 'database unavailable');
    if (!res.headersSent) res.setHeader('Retry-After', '2');
    apiError = new ApiError('service_unavailable', 'The service is temporarily unavailable. Retry in a few seconds.');
  } else {
    (req.log ?? console).error({ err }, 'unhandled error');
    apiError = new ApiError('internal_error', 'An unexpected error occurred. Quote the Request-Id header when reporting it.');
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(apiError.status).json(apiError.toBody());
};
