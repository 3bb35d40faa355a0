import { z } from 'zod';

/**
 * The closed set of error types and codes, and the HTTP status each one answers with.
 * Every error response has the shape {"error": {"type", "code", "message", "param"?}}.
 */
export const ERROR_CODES = {
  // 400
  parameter_unknown: [400, 'invalid_request_error'],
  parameter_missing: [400, 'invalid_request_error'],
  parameter_invalid: [400, 'invalid_request_error'],
  body_invalid_json: [400, 'invalid_request_error'],
  request_malformed: [400, 'invalid_request_error'],
  pagination_cursors_conflict: [400, 'invalid_request_error'],
  resource_invalid_state: [400, 'invalid_request_error'],
  resource_limit_reached: [400, 'invalid_request_error'],
  charge_disputed: [400, 'invalid_request_error'],
  /** The mode has no card processor (live without Stripe keys): nothing is simulated, nothing is sent. */
  processor_unavailable: [400, 'invalid_request_error'],
  idempotency_key_reused: [400, 'idempotency_error'],
  idempotency_key_invalid: [400, 'idempotency_error'],
  // 401 / 403
  api_key_missing: [401, 'authentication_error'],
  api_key_invalid: [401, 'authentication_error'],
  forbidden: [403, 'permission_error'],
  // 404
  resource_missing: [404, 'invalid_request_error'],
  route_not_found: [404, 'invalid_request_error'],
  // 405 / 409 / 413 / 415
  method_not_allowed: [405, 'invalid_request_error'],
  resource_conflict: [409, 'invalid_request_error'],
  idempotency_key_in_progress: [409, 'idempotency_error'],
  body_too_large: [413, 'invalid_request_error'],
  content_type_unsupported: [415, 'invalid_request_error'],
  // 429 / 5xx
  rate_limited: [429, 'rate_limit_error'],
  internal_error: [500, 'api_error'],
  service_unavailable: [503, 'api_error'],
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorType = (typeof ERROR_CODES)[ErrorCode][1];

const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];
const ERROR_TYPE_NAMES = [...new Set(Object.values(ERROR_CODES).map(([, type]) => type))] as [ErrorType, ...ErrorType[]];

/** The one error body of every status (the OpenAPI document's `error` component). */
export const ErrorObject = z
  .strictObject({
    error: z
      .strictObject({
        type: z.enum(ERROR_TYPE_NAMES).meta({ description: 'The kind of error; each code belongs to one type.' }),
        code: z.enum(ERROR_CODE_NAMES).meta({ description: 'What went wrong, one of a closed set: each code always answers with the same HTTP status.' }),
        message: z.string().meta({ description: 'A sentence for the developer reading the log; may change, so never parse it.' }),
        param: z
          .string()
          .optional()
          .meta({ description: 'The parameter at fault, named as sent (`line_items[0][amount]`, `metadata`, `id` for a path id).' }),
      })
      .meta({ description: 'What went wrong.' }),
  })
  .meta({ id: 'error', description: 'Every error answers this shape, with a `Request-Id` header to quote when reporting it.' });

export type ErrorBody = z.infer<typeof ErrorObject>;

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly param: string | undefined;

  constructor(code: ErrorCode, message: string, param?: string) {
    super(message);
    const [status, type] = ERROR_CODES[code];
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { type: this.type, code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    return { error };
  }
}

/** The answer for an id that does not exist, belongs to another account, or to the other mode. */
export function resourceMissing(resource: string, id: string, param = 'id'): ApiError {
  return new ApiError('resource_missing', `No such ${resource}: '${id}'`, param);
}

export function invalidParam(param: string, message: string): ApiError {
  return new ApiError('parameter_invalid', message, param);
}
