import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Field errors in Django REST framework's shape: field name to a list of messages. */
export type FieldErrors = Record<string, string[]>;

type Kind =
  | "validation"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "gone"
  | "unprocessable"
  | "payload_too_large"
  | "unsupported_media_type"
  | "throttled"
  | "busy"
  | "not_configured"
  | "internal";

const STATUS: Record<Kind, ContentfulStatusCode> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  unprocessable: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  throttled: 429,
  busy: 503,
  not_configured: 500,
  internal: 500,
};

/**
 * The one error type. Domain code throws it with a kind; `body()` and `status` turn it
 * into HTTP in one place.
 */
export class AppError extends Error {
  constructor(
    readonly kind: Kind,
    readonly detail: string,
    readonly fields?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }

  get status(): ContentfulStatusCode {
    return STATUS[this.kind];
  }

  body(): FieldErrors | { detail: string } {
    return this.fields ?? { detail: this.detail };
  }
}

export const notFound = (detail = "Not found.") => new AppError("not_found", detail);
export const conflict = (detail: string) => new AppError("conflict", detail);
export const forbidden = (detail = "You do not have permission to perform this action.") => new AppError("forbidden", detail);
export const invalid = (fields: FieldErrors) => new AppError("validation", "Invalid input.", fields);
export const invalidField = (field: string, message: string) => invalid({ [field]: [message] });
