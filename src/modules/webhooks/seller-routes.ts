import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sellerOf } from '../../http/auth.ts';
import { Envelope, ok, UuidParams } from '../../http/schemas.ts';
import { MAX_ENDPOINTS_PER_MODE, type WebhooksDeps } from './endpoints.ts';
import { CreateEndpointBody, EndpointWithSecretSchema, UpdateEndpointBody } from './routes.ts';
import { EndpointSchema } from './schema.ts';
import {
  createSellerEndpoint,
  deleteSellerEndpoint,
  listSellerEndpoints,
  updateSellerEndpoint,
} from './seller-endpoints.ts';

const SELLER_NOTE =
  "A seller's endpoints receive the events about its own legs (leg.awaiting_payee), signed like a merchant's (Standard Webhooks headers) and retried on the same schedule; another seller's endpoint is 404.";

/** A seller's webhook endpoints, managed with its seller key (`sel_live_…`; DESIGN 3b). */
export const sellerWebhookRoutes: FastifyPluginAsyncTypebox<{ deps: WebhooksDeps }> = async (app, { deps }) => {
  app.post(
    '/v1/seller/webhook-endpoints',
    {
      config: { operation_id: 'createSellerWebhookEndpoint', auth: 'seller', errors: [409, 'WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['seller'],
        summary: "Create one of the seller's webhook endpoints; returns its signing secret once",
        description: `At most ${MAX_ENDPOINTS_PER_MODE} endpoints (409 WEBHOOK_ENDPOINT_LIMIT); they must resolve to public addresses (400 WEBHOOK_URL_FORBIDDEN). ${SELLER_NOTE}`,
        body: CreateEndpointBody,
        response: { 201: Envelope(EndpointWithSecretSchema) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(ok(await createSellerEndpoint(deps, sellerOf(request), request.body))),
  );

  app.get(
    '/v1/seller/webhook-endpoints',
    {
      config: { operation_id: 'listSellerWebhookEndpoints', auth: 'seller' },
      schema: {
        tags: ['seller'],
        summary: "The seller's webhook endpoints, oldest first (never their secrets)",
        description: SELLER_NOTE,
        response: { 200: Envelope(Type.Array(EndpointSchema)) },
      },
    },
    async (request) => ok(await listSellerEndpoints(deps, sellerOf(request))),
  );

  app.patch(
    '/v1/seller/webhook-endpoints/:id',
    {
      config: { operation_id: 'updateSellerWebhookEndpoint', auth: 'seller', errors: [404, 'WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['seller'],
        summary: "Change a seller's webhook endpoint (URL, description, events, disabled)",
        description: `A disabled endpoint gets no new events. ${SELLER_NOTE}`,
        params: UuidParams,
        body: UpdateEndpointBody,
        response: { 200: Envelope(EndpointSchema) },
      },
    },
    async (request) => ok(await updateSellerEndpoint(deps, sellerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/seller/webhook-endpoints/:id',
    {
      config: { operation_id: 'deleteSellerWebhookEndpoint', auth: 'seller', errors: [404] },
      schema: {
        tags: ['seller'],
        summary: "Delete a seller's webhook endpoint; its pending deliveries are skipped",
        description: SELLER_NOTE,
        params: UuidParams,
        response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })) },
      },
    },
    async (request) => ok(await deleteSellerEndpoint(deps, sellerOf(request), request.params.id)),
  );
};
