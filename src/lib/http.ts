import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { setLast, setLater } from './headers.ts';
import { infoLineWriter } from './logger.ts';
import { isDatabaseUnavailable } from './dependencies.ts';
import { ApiError } from './errors.ts';
import { randomView } from './random.ts';
import { findTooDeep, markPlainText, MAX_BODY_DEPTH } from './validate.ts';

const newRequestId = () => `req_${randomView(12).toString('base64url')}`;

/** Told of every answered request and how long it took (the HTTP metrics, src/metrics/http.ts). */
export type RequestObserver = (req: express.Request, res: express.Response, seconds: number) => void;

/**
 * The logger a request's `req.log` is made from, and the child once made (lazy: most requests never
 * log), held in slots under symbols on the request. Not WeakMaps: an entry in a WeakMap per request
 * costs an ephemeron the garbage collector must visit (issue 28: two WeakMap entries per GET, for
 * this and the caller's key, cost about 1 µs a request in a microbenchmark against 4 ns for slots;
 * in the service, GETs in alternating rounds: 3.7 and 10 % more a second; decisions.md, the session
 * of 2026-11-28 from 12:14 UTC). Symbols: no JSON, spread or for-in sees them.
 */
const BASE_LOG = Symbol('baseLog');
const CHILD_LOG = Symbol('childLog');
type LogSlots = express.Request & { [BASE_LOG]?: Logger; [CHILD_LOG]?: Logger };
// Defined once per process on Express's request prototype, which every app's requests inherit.
Object.defineProperty(express.request, 'log', {
  configurable: true,
  get(this: LogSlots): Logger {
    let child = this[CHILD_LOG];
    if (!child) child = this[CHILD_LOG] = this[BASE_LOG]!.child({ reqId: this.id });
    return child;
  },
  set(this: LogSlots, value: Logger) {
    this[CHILD_LOG] = value;
  },
});

/**
 * Request-Id header, a child logger per request (`req.log`, made the first time it is used), and
 * one access-log line when the answer is sent (and `observe`, on the same timing). The access line
 * is written by the base logger with the request id as a field, the same JSON as the child's
 * (issue 28: a child logger per request cost 3 to 4 µs, mostly for requests that log nothing else).
 */
export function requestContext(log: Logger, observe?: RequestObserver): RequestHandler {
  // The access line with pino's bytes, built by hand where the logger allows (src/lib/logger.ts).
  // A request's child logger writes the same line: its one binding is the reqId the line holds.
  const line = infoLineWriter(log, ['reqId', 'method', 'path', 'status', 'ms']);
  return (req, res, next) => {
    const start = performance.now(); // monotonic, in ms (a double: no BigInt per request)
    const id = newRequestId();
    req.id = id;
    (req as LogSlots)[BASE_LOG] = log;
    setLater(res, 'Request-Id', id); // written with the head (src/lib/headers.ts)
    res.on('finish', () => {
      const ms = performance.now() - start;
      observe?.(req, res, ms / 1000);
      const url = req.originalUrl;
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const rounded = Math.round(ms * 10) / 10;
      if (line) {
        // The id (base64url) and the method (an HTTP token, as Node's parser admits) hold nothing JSON escapes.
        line(`,"reqId":"${id}","method":"${req.method}","path":${JSON.stringify(path)},"status":${res.statusCode},"ms":${rounded}`, 'request');
        return;
      }
      const child = (req as LogSlots)[CHILD_LOG];
      (child ?? log).info(
        child ? { method: req.method, path, status: res.statusCode, ms: rounded } : { reqId: id, method: req.method, path, status: res.statusCode, ms: rounded },
        'request',
      );
    });
    next();
  };
}

const MAX_BODY_BYTES = 1024 * 1024;

const parseJson = express.json({
  limit: MAX_BODY_BYTES,
  strict: true,
  verify: (req, _res, buf) => {
    (req as express.Request).rawBody = buf;
  },
});

/** `application/json`, alone or with `charset=utf-8`: the only type the fast path reads. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * The body of an ordinary API call (issue 28: Express's JSON parser cost about as much CPU as the
 * rest of a create): `Content-Type: application/json` (UTF-8), a Content-Length of at most 1 MB, no
 * Content-Encoding. Read straight from the socket into one buffer and JSON.parse'd; answers false
 * for anything else, which express.json() then handles (and refuses) as before. The errors are
 * those of express.json() for the same faults.
 */
function fastJson(req: express.Request, next: (err?: unknown, shallow?: boolean) => void): boolean {
  const type = req.headers['content-type'];
  const length = req.headers['content-length'];
  if (type === undefined || length === undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (!PLAIN_JSON.test(type)) return false;
  const expected = Number(length);
  if (!Number.isSafeInteger(expected) || expected <= 0 || expected > MAX_BODY_BYTES) return false;
  const body = Buffer.allocUnsafe(expected);
  let received = 0;
  let done = false;
  const finish = (err?: ApiError) => {
    if (done) return;
    done = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    req.off('error', onAborted);
    if (err) {
      req.resume(); // drain what is left, as express.json() does
      return next(err);
    }
    // A UTF-8 byte order mark is dropped, as express.json()'s decoder does.
    const start = received >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    const text = body.toString('utf8', start, received);
    // strict: an object or an array only, as express.json({ strict: true }).
    const first = /\S/.exec(text)?.[0];
    let parsed: unknown;
    try {
      if (first !== '{' && first !== '[') throw new SyntaxError('not an object or an array');
      parsed = JSON.parse(text);
    } catch {
      return next(new ApiError('body_invalid_json', 'The request body is not valid JSON.'));
    }
    req.rawBody = start === 0 ? body : body.subarray(start);
    req.body = parsed;
    if (!text.includes('\\u')) markPlainText(parsed as object);
    next(undefined, fewerBrackets(text, MAX_BODY_DEPTH));
  };
  const onData = (chunk: Buffer) => {
    if (received + chunk.length > expected) return finish(new ApiError('body_invalid_json', 'The request body does not match its Content-Length.'));
    chunk.copy(body, received);
    received += chunk.length;
  };
  const onEnd = () => finish(received === expected ? undefined : new ApiError('body_invalid_json', 'The request body does not match its Content-Length.'));
  const onAborted = () => finish(new ApiError('body_invalid_json', 'The request body was not received completely.'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('error', onAborted);
  return true;
}

/**
 * Whether the text has fewer than `max` opening brackets, inside strings or not: then its objects
 * and arrays cannot nest `max` deep, and the walk of findTooDeep is skipped (a count of characters
 * costs less than a walk that makes an entry for each value).
 */
function fewerBrackets(text: string, max: number): boolean {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 123 /* { */ || c === 91) /* [ */ && ++n >= max) return false;
  }
  return true;
}

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
  const parsed = (err?: unknown, shallow = false) => {
    if (err) return next(err);
    const deep = shallow ? null : findTooDeep(req.body, MAX_BODY_DEPTH);
    if (!deep) return next();
    next(new ApiError('parameter_invalid', `The request body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep.`, Array.isArray(req.body) ? undefined : deep[0]));
  };
  // No body (a GET): nothing to read, as express.json() would find (req.body stays undefined).
  if (!hasBody(req)) return next();
  if (fastJson(req, parsed)) return;
  if (!req.is('application/json')) {
    next(new ApiError('content_type_unsupported', 'Request bodies must be JSON: send Content-Type: application/json.'));
    return;
  }
  parseJson(req, res, parsed);
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

/** A conditional request (If-None-Match, If-Modified-Since), which Express's send may answer 304: left to it. */
export const isConditional = (req: express.Request): boolean =>
  req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;

/**
 * The headers Express's send gives a whole body (`Content-Type` as given, `Content-Length` in
 * bytes); true when the request is a HEAD, which then gets the headers only (`res.end()`).
 */
export function wholeBodyHeaders(res: express.Response, contentType: string, length: number): boolean {
  setLast(res, 'Content-Type', contentType);
  setLast(res, 'Content-Length', String(length));
  return res.req.method === 'HEAD';
}

/** A whole body in one `res.end`, with wholeBodyHeaders; a HEAD gets the headers only. The status is the response's own. */
export function endWhole(res: express.Response, contentType: string, body: string): void {
  if (wholeBodyHeaders(res, contentType, Buffer.byteLength(body, 'utf8'))) res.end();
  else res.end(body, 'utf8');
}

/**
 * `res.json` for this app (issue 28.2): the same bytes and headers as Express's (`Content-Type:
 * application/json; charset=utf-8`, `Content-Length`), written with one `res.end`. Express's own
 * path sets the content type twice through mime-types and content-type's parser, asks for an ETag
 * (off here), checks freshness and copies any body of 1,000 characters or more into a Buffer,
 * which then goes out in a second write. Whatever that path would treat differently is left to
 * it: a content type or Transfer-Encoding already set, a conditional request (If-None-Match,
 * If-Modified-Since), HEAD, a status without a body (204, 205, 304), a value JSON.stringify
 * answers undefined for, and any of the app's `json …` settings.
 */
export function leanJson(app: express.Express): void {
  const expressJson = express.response.json;
  app.response.json = function json(this: express.Response, obj: unknown) {
    const req = this.req;
    const status = this.statusCode;
    const settings = this.app.settings as Record<string, unknown>;
    if (
      req.method === 'HEAD' ||
      status === 204 ||
      status === 205 ||
      status === 304 ||
      isConditional(req) ||
      this.hasHeader('content-type') ||
      this.hasHeader('transfer-encoding') ||
      settings['json replacer'] !== undefined ||
      settings['json spaces'] !== undefined ||
      settings['json escape'] ||
      settings['etag fn'] !== undefined
    ) {
      return expressJson.call(this, obj);
    }
    const body = JSON.stringify(obj) as string | undefined;
    if (body === undefined) return expressJson.call(this, obj);
    endWhole(this, 'application/json; charset=utf-8', body);
    return this;
  };
}
