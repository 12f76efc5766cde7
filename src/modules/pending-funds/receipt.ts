import { AppError } from '../../lib/errors.ts';

export const RECEIPT_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] as const;
export const RECEIPT_MAX_BYTES = 5 * 1024 * 1024;
/** Base64 of the largest receipt plus JSON around it: the route's body limit. */
export const RECEIPT_BODY_LIMIT_BYTES = Math.ceil((RECEIPT_MAX_BYTES * 4) / 3) + 64 * 1024;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Rule 3 of the contract's section 4.3: a malformed request is refused before anything else is read, without
 * calling the validator and without an audit row. Precedence: content type, then the base64 itself.
 */
export function decodeReceipt(receipt_base64: string, content_type: string): Uint8Array {
  if (!(RECEIPT_CONTENT_TYPES as readonly string[]).includes(content_type.toLowerCase())) {
    throw new AppError('RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED', `content_type must be one of ${RECEIPT_CONTENT_TYPES.join(', ')}`, [{ field: 'body.content_type', message: 'unsupported' }]);
  }
  const compact = receipt_base64.replace(/\s+/g, '');
  if (compact.length === 0 || !BASE64.test(compact)) {
    throw new AppError('RECEIVER_CONFIRM_MALFORMED_RECEIPT', 'receipt_base64 is not valid base64', [{ field: 'body.receipt_base64', message: 'malformed base64' }]);
  }
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.byteLength === 0) {
    throw new AppError('RECEIVER_CONFIRM_MALFORMED_RECEIPT', 'receipt_base64 decodes to nothing', [{ field: 'body.receipt_base64', message: 'empty' }]);
  }
  if (bytes.byteLength > RECEIPT_MAX_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `receipt is larger than ${RECEIPT_MAX_BYTES} bytes`, [{ field: 'body.receipt_base64', message: 'too large' }]);
  }
  return new Uint8Array(bytes);
}
