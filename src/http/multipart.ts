import type { FastifyRequest } from 'fastify';
import { proofLegMalformed, proofMultipartMalformed, proofNotMultipart, proofPartsOverLegs } from './http-errors.ts';

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
export async function readProofParts(request: FastifyRequest, max_bytes: number, max_files: number): Promise<ProofParts> {
  if (!request.isMultipart()) {
    throw proofNotMultipart();
  }
  const files: Buffer[] = [];
  let leg_text: string | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: max_bytes, files: max_files, fields: 10 } })) {
      if (part.type === 'file') {
        const buffer = await part.toBuffer();
        if (part.fieldname === 'proof') files.push(buffer);
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
  if (leg_text === undefined) return { files };
  if (!/^[1-9]\d{0,3}$/.test(leg_text.trim())) throw proofLegMalformed();
  return { files, leg: Number(leg_text.trim()) };
}
