import { AppError, type ErrorCode } from '../../lib/errors.ts';

/**
 * The one receipt pipeline: every piece of evidence a merchant or buyer uploads (a payment proof, a pending-funds
 * receipt, a sell order's cash-leg evidence) is decoded and checked here, with one base64 rule, one list of content
 * types per kind and one size limit. Only the error codes differ, because the contract names them per route.
 */

/** What a receipt (a bank slip or a PDF) may declare itself as: receiver-confirm, pending-funds origin, cash-leg evidence. */
export const RECEIPT_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] as const;
export type ReceiptContentType = (typeof RECEIPT_CONTENT_TYPES)[number];

/** The largest receipt, decoded (receiver-confirm and confirm-cash-leg). */
export const RECEIPT_MAX_BYTES = 5 * 1024 * 1024;
/** Base64 of the largest receipt plus JSON around it: the body limit of every route that takes a receipt. */
export const RECEIPT_BODY_LIMIT_BYTES = Math.ceil((RECEIPT_MAX_BYTES * 4) / 3) + 64 * 1024;

/** The 400 codes a route answers for a receipt it cannot use. */
export interface ReceiptErrorCodes {
  unsupported_type: ErrorCode;
  malformed: ErrorCode;
}

/** Receiver-confirm and the pending-funds origin: the codes the contract's section 7 names. */
export const RECEIVER_CONFIRM_CODES: ReceiptErrorCodes = {
  unsupported_type: 'RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED',
  malformed: 'RECEIVER_CONFIRM_MALFORMED_RECEIPT',
};
/** Confirm-cash-leg: the contract says "400 missing evidence or bad base64" and names no code, so the generic one. */
export const CASH_LEG_CODES: ReceiptErrorCodes = {
  unsupported_type: 'VALIDATION_ERROR',
  malformed: 'VALIDATION_ERROR',
};

// RFC 4648 section 4: the standard alphabet, padded to a multiple of four (whitespace between lines is tolerated).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict base64: the bytes, or null when it is not base64 or decodes to nothing. */
export function decodeBase64(value: string): Uint8Array | null {
  const compact = value.replace(/\s+/g, '');
  if (compact.length === 0 || !BASE64.test(compact)) return null;
  const bytes = Buffer.from(compact, 'base64');
  return bytes.byteLength === 0 ? null : new Uint8Array(bytes);
}

/**
 * A receipt sent as JSON `{receipt_base64, content_type}`. Precedence (contract 4.3 rule 3, checked before anything
 * else is read, the validator is called or an audit row written): content type, then the base64, then the size.
 */
export function decodeReceipt(
  input: { receipt_base64: string; content_type: string },
  codes: ReceiptErrorCodes,
  /** The body field the base64 came in, as errors name it. */
  { data_field = 'body.receipt_base64' }: { data_field?: string } = {},
): Uint8Array {
  if (!(RECEIPT_CONTENT_TYPES as readonly string[]).includes(input.content_type.toLowerCase())) {
    throw new AppError(codes.unsupported_type, `content_type must be one of ${RECEIPT_CONTENT_TYPES.join(', ')}`, [
      { field: 'body.content_type', message: 'unsupported' },
    ]);
  }
  const bytes = decodeBase64(input.receipt_base64);
  if (!bytes)
    throw new AppError(codes.malformed, `${data_field.replace('body.', '')} is not valid base64`, [
      { field: data_field, message: 'malformed base64' },
    ]);
  if (bytes.byteLength > RECEIPT_MAX_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `receipt is larger than ${RECEIPT_MAX_BYTES} bytes`, [
      { field: data_field, message: 'too large' },
    ]);
  }
  return bytes;
}

/** The raster formats a payment proof may be, recognised by magic bytes (never by the client's content type). */
export type ProofType = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/heic';

const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

export function sniffImageType(bytes: Uint8Array): ProofType | null {
  const ascii = (from: number, to: number) => Buffer.from(bytes.subarray(from, to)).toString('latin1');
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png';
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 12 && ascii(4, 8) === 'ftyp' && HEIC_BRANDS.has(ascii(8, 12))) return 'image/heic';
  return null;
}

/**
 * A payment proof sent as the multipart file `proof` (its size was already capped at PROOF_MAX_BYTES, 413, while
 * the body was read): required, and an image by its bytes.
 */
export function checkProof(file: Uint8Array | undefined): { bytes: Uint8Array; content_type: ProofType } {
  if (!file || file.byteLength === 0) {
    throw new AppError('VALIDATION_ERROR', 'multipart field `proof` (an image file) is required', [
      { field: 'body.proof', message: 'required' },
    ]);
  }
  const content_type = sniffImageType(file);
  if (!content_type) throw new AppError('PROOF_UNSUPPORTED_TYPE', 'proof must be a JPEG, PNG, WebP or HEIC image');
  return { bytes: file, content_type };
}
