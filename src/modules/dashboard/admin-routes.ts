import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ok, Timestamp, UuidParams } from '../../http/schemas.ts';
import { inviteMerchantUser, type UsersDeps } from './users.ts';

const Role = Type.Union([Type.Literal('owner'), Type.Literal('developer'), Type.Literal('finance'), Type.Literal('viewer')]);

const MerchantUserSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  status: Type.Union([Type.Literal('invited'), Type.Literal('active')]),
  created_at: Timestamp,
});

/** The operator adds dashboard users to a merchant; the answer carries the one-time invitation link. */
export const dashboardAdminRoutes: FastifyPluginAsyncTypebox<{ deps: UsersDeps }> = async (app, { deps }) => {
  app.post(
    '/admin/merchants/:id/users',
    {
      config: { auth: 'admin', errors: [404, 409] },
      schema: {
        tags: ['admin'],
        summary: 'Invite a dashboard user (owner, developer, finance or viewer); the invitation link is shown only here',
        description: 'The link `/dashboard/invite/<token>` sets the password once and expires after 72 hours. An email that already has a user is 409 MERCHANT_USER_EXISTS.',
        params: UuidParams,
        body: Type.Object(
          {
            email: Type.String({ format: 'email', minLength: 3, maxLength: 320 }),
            role: Role,
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Type.Object({ user: MerchantUserSchema, invitation_url: Type.String(), invitation_expires_at: Timestamp })) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await inviteMerchantUser(deps, request.params.id, request.body));
    },
  );
};
