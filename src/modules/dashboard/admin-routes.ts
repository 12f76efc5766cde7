import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ok, UuidParams } from '../../http/schemas.ts';
import { InvitedUserSchema, Role } from './schema.ts';
import { inviteUser, type UsersDeps } from './users.ts';

/** The operator adds dashboard users to a merchant; the answer carries the one-time invitation link. */
export const dashboardAdminRoutes: FastifyPluginAsyncTypebox<{ deps: UsersDeps }> = async (app, { deps }) => {
  app.post(
    '/admin/merchants/:id/users',
    {
      config: { auth: 'admin', errors: [404, 409] },
      schema: {
        tags: ['admin'],
        summary:
          'Invite a dashboard user (owner, developer, finance or viewer); the invitation link is shown only here',
        description:
          'The link `/dashboard/invite/<token>` sets the password once and expires after 72 hours. An email that already has a user is 409 MERCHANT_USER_EXISTS.',
        params: UuidParams,
        body: Type.Object(
          {
            email: Type.String({ format: 'email', minLength: 3, maxLength: 320 }),
            role: Role,
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(InvitedUserSchema) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await inviteUser(deps, request.params.id, request.body));
    },
  );
};
