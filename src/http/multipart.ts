import type { FastifyRequest } from 'fastify';
import { proofLegMalformed, proofMultipartMalformed, proofNotMultipart, proofPartsOverLegs } from './http-errors.ts';

export interface MultipartForm {
  fields: Record<string, string>;
  /** The first file part (a browser sends an empty one when no file was chosen). */
  file?: { field: string; data: Buffer; mimetype: string } | undefined;
}

/**
 * Reads a multipart/form-data body: its text fields and its first non-empty file. Too large stays 413; a body
 * without a boundary, truncated or with broken part headers is the client's 400.
 */
export async function readMultipartForm(
  request: FastifyRequest,
  limits: { max_bytes?: number; fields?: number } = {},
): Promise<MultipartForm> {
  const form: MultipartForm = { fields: {} };
  try {
    const parts = request.parts({
      limits: { files: 1, fields: limits.fields ?? 20, ...(limits.max_bytes ? { fileSize: limits.max_bytes } : {}) },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        if (!form.file) form.file = { field: part.fieldname, data, mimetype: part.mimetype };
      } else if (typeof part.value === 'string') {
        form.fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE' || (error as { statusCode?: number }).statusCode === 413) throw error;
    throw proofMultipartMalformed((error as Error).message);
  }
  return form;
}

/** The proof upload's body: the `proof` files in order and the optional `leg` field. */
export interface ProofParts {
  files: Buffer[];
  leg?: number | undefined;
}

/**
 * Reads a proof upload: at most `max_files` `proof` parts (one per leg of the payment) of at most `max_bytes` each,
 * and an optional `leg` field (a positive integer). A part too large is 413; more parts than legs, a bad `leg` or a
 * broken body is 400.
 */
export async function readProofParts(
  request: FastifyRequest,
  max_bytes: number,
  max_files: number,
): Promise<ProofParts> {
  if (!request.isMultipart()) throw proofNotMultipart();
  const files: Buffer[] = [];
  let leg_text: string | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: max_bytes, files: max_files, fields: 10 } })) {
      if (part.type === 'file') {
        const buffer = await part.toBuffer();
        // A browser sends an empty part for a file input left empty.
        if (part.fieldname === 'proof' && buffer.byteLength > 0) files.push(buffer);
      } else if (part.fieldname === 'leg') {
        leg_text = String(part.value);
      }
    }
  } catch (error) {
    // Too large stays 413; more parts than legs, a body without a boundary, truncated or with broken part headers: 400.
    const code = (error as { code?: string }).code;
    if (code === 'FST_FILES_LIMIT') throw proofPartsOverLegs(max_files);
    if (code === 'FST_REQ_FILE_TOO_LARGE' || (error as { statusCode?: number }).statusCode === 413) throw error;
    throw proofMultipartMalformed((error as Error).message);
  }
  if (leg_text === undefined || leg_text.trim() === '') return { files };
  if (!/^[1-9]\d{0,3}$/.test(leg_text.trim())) throw proofLegMalformed();
  return { files, leg: Number(leg_text.trim()) };
}

/** The text fields of a parsed urlencoded body (the first of a repeated name; anything else dropped). */
export function formFields(body: unknown): Record<string, string> {
  const form: Record<string, string> = {};
  if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === 'string') form[key] = value;
      else if (Array.isArray(value) && typeof value[0] === 'string') form[key] = value[0];
    }
  }
  return form;
}
