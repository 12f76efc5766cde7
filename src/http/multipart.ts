import type { FastifyRequest } from 'fastify';
import { proofMultipartMalformed, proofNotMultipart } from './http-errors.ts';

export interface MultipartForm {
  fields: Record<string, string>;
  /** The first file part (a browser sends an empty one when no file was chosen). */
  file?: { field: string; data: Buffer; mimetype: string } | undefined;
}

/**
 * Reads a multipart/form-data body: its text fields and its first non-empty file. Too large stays 413; a body
 * without a boundary, truncated or with broken part headers is the client's 400.
 */
export async function readMultipartForm(request: FastifyRequest, limits: { max_bytes?: number; fields?: number } = {}): Promise<MultipartForm> {
  const form: MultipartForm = { fields: {} };
  try {
    const parts = request.parts({ limits: { files: 1, fields: limits.fields ?? 20, ...(limits.max_bytes ? { fileSize: limits.max_bytes } : {}) } });
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

/** Reads the one `proof` file of a multipart body; too large is 413, anything else wrong is 400. */
export async function readProofFile(request: FastifyRequest, max_bytes: number): Promise<Buffer | undefined> {
  if (!request.isMultipart()) throw proofNotMultipart();
  const { file } = await readMultipartForm(request, { max_bytes, fields: 10 });
  return file?.field === 'proof' ? file.data : undefined;
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
