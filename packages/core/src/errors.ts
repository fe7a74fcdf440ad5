/** Every failure the service reports is a ServiceError carrying one ErrorCode. */

const STATUS = {
  InvalidUriSyntax: 400,
  InvalidConditionSyntax: 400,
  InvalidConditionOperator: 400,
  InvalidConditionValueType: 400,
  InvalidMetaConditionKey: 400,
  InvalidMetaConditionOperator: 400,
  InvalidMetaConditionValueType: 400,
  InvalidMetaConditionSyntax: 400,
  InvalidEventSelector: 400,
  FailedJsonDeserialization: 400,
  NoDataSource: 400,
  InvalidResourceEntity: 400,
  AmbiguousMatch: 400,
  InvalidSource: 400,
  InvalidSourceData: 400,
  InvalidDestination: 400,
  FailedExcelRead: 400,
  NotAuthorized: 401,
  Forbidden: 403,
  UnknownResource: 404,
  AmbiguousResource: 404,
  UnknownView: 404,
  UnknownMacro: 404,
  UnknownProperty: 404,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedContent: 415,
  TooManyRequests: 429,
  Unknown: 500,
  ServiceUnavailable: 503,
  InfiniteLoopDetected: 508,
} as const;

export type ErrorCode = keyof typeof STATUS;

export const ERROR_CODES = Object.keys(STATUS) as ErrorCode[];

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

const BRAND = Symbol.for('resourcery.ServiceError');

export interface ServiceErrorOptions {
  /** Extra response headers (e.g. Allow for 405). */
  headers?: Record<string, string>;
  /** Extra data shown in the error body (e.g. per-property validation messages). */
  data?: unknown;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly data?: unknown;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = STATUS[code];
    this.headers = options.headers;
    this.data = options.data;
  }

  /**
   * The message clients get. An unexpected exception's own text (paths, SQL, internals)
   * stays in the Error record and the onError hook; the client gets GENERIC_MESSAGE.
   */
  get publicMessage(): string {
    return this.unexpected ? GENERIC_MESSAGE : this.message;
  }

  /** Made from something thrown that was not a ServiceError (a bug, a failing dependency). */
  get unexpected(): boolean {
    return this.cause !== undefined && !ServiceError.is(this.cause) && this.code === 'Unknown';
  }

  /** Recognises ServiceErrors from another copy of the library (ESM and CJS both loaded). */
  static is(value: unknown): value is ServiceError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** What a client reads for an unexpected error (docs/errors.md). */
const GENERIC_MESSAGE = 'An unexpected error occurred; the details are in the error record linked by MoreInfoAt';

/** Maps anything thrown to a ServiceError; unexpected exceptions become 500 Unknown (their message kept for the record). */
export function toServiceError(value: unknown): ServiceError {
  if (ServiceError.is(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  const error = new ServiceError('Unknown', message || 'Unexpected error', { cause: value ?? null });
  if (value instanceof Error && value.stack) error.stack = value.stack;
  return error;
}
