import type { FastifyRequest } from 'fastify';
import { proofMultipartMalformed, proofNotMultipart } from './http-errors.ts';

/** Reads the one `proof` file of a multipart body; too large is 413, anything else wrong is 400. */
export async function readProofFile(request: FastifyRequest, max_bytes: number): Promise<Buffer | undefined> {
  if (!request.isMultipart()) {
    throw proofNotMultipart();
  }
  let file: Buffer | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: max_bytes, files: 1, fields: 10 } })) {
      if (part.type === 'file') {
        const buffer = await part.toBuffer();
        if (part.fieldname === 'proof') file = buffer;
      }
    }
  } catch (error) {
    // Too large stays 413; a body without a boundary, truncated or with broken part headers is the client's 400.
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE' || (error as { statusCode?: number }).statusCode === 413) throw error;
    throw proofMultipartMalformed((error as Error).message);
  }
  return file;
}
