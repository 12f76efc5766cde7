import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';

/** A PNG answer (QR codes): spread into a route's schema; the handler answers with `sendPng`. */
export const PngResponse = {
  produces: ['image/png'],
  response: {
    200: {
      description: 'PNG image',
      content: { 'image/png': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
    },
  },
};

/** Sends a PNG that clients and proxies (`public`) or only the client (`private`) may keep five minutes. */
export function sendPng(reply: FastifyReply, png: Buffer, cache: 'public' | 'private'): FastifyReply {
  return reply.header('Cache-Control', `${cache}, max-age=300`).type('image/png').send(png);
}
