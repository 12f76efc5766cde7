/** A non-2xx answer: the error body's `code`, the HTTP status and the request id to quote to support. */
export class MpayApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly request_id: string | undefined;
  readonly details: unknown[];
  readonly body: unknown;
  constructor(
    status: number,
    code: string,
    message: string,
    request_id: string | undefined,
    details: unknown[],
    body: unknown,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'MpayApiError';
    this.status = status;
    this.code = code;
    this.request_id = request_id;
    this.details = details;
    this.body = body;
  }
}

/** The server could not be reached (after the retries), or the call timed out. */
export class MpayConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MpayConnectionError';
  }
}
