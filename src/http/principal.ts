import type { AppError, ErrorCode } from '../lib/errors.ts';

/** `key_or_merchant`: a secret API key (X-API-Key, or a Bearer that is not a JWT), a merchant JWT or a dashboard session. */
export type AuthKind = 'key' | 'merchant' | 'key_or_merchant' | 'seller' | 'admin' | 'internal' | 'public';

/** Which key modes a `key` route admits: live routes refuse sandbox keys and vice versa (403 SANDBOX_ONLY). */
export type ModeRule = 'any' | 'live_only' | 'sandbox_only';

export type KeyKind = 'live' | 'test' | 'sandbox';

/** Dashboard roles that may move money (sell, buy, dispute): the dashboard's `money` permission and the /v1 rule for its sessions. */
export const MONEY_ROLES: readonly string[] = ['owner', 'finance'];

export type Principal =
  | { kind: 'key'; merchant_id: string; key_id: string; key_kind: KeyKind; is_sandbox: boolean }
  | {
      kind: 'merchant';
      merchant_id: string;
      user_id: string;
      via: 'jwt' | 'session';
      is_sandbox: boolean;
      /** False for a dashboard user whose role may not move money (developer, viewer): such a session only reads /v1 routes. */
      may_move_money: boolean;
    }
  /** A seller's own key (`sel_live_…`): it reaches only the seller routes and that seller's legs. */
  | { kind: 'seller'; seller_id: string }
  | { kind: 'admin'; actor_user_id: string; actor_role: string }
  | { kind: 'internal' }
  | { kind: 'public' };

export type MerchantScope = { merchant_id: string; is_sandbox: boolean };

/**
 * A request whose statements check the credential epoch themselves: a credential served from the process's cache is
 * returned without an epoch read, and `epoch` is set to the epoch it was read under (or, for one read from the
 * database, to the epoch read before it). The request's statement must then still see that epoch, or the request
 * authenticates again (auth.ts `withCarriedEpoch`); a change that lands between the authentication and the statement
 * is caught too. Left unset when there is no cache.
 */
export interface CarriedEpoch {
  epoch?: number;
}

/** Verifies credentials; implemented by the merchants module. Each method resolves to null when the credential is not valid. */
export interface Authenticator {
  byApiKey(raw_key: string, carried?: CarriedEpoch): Promise<Extract<Principal, { kind: 'key' }> | null>;
  bySellerKey(raw_key: string): Promise<Extract<Principal, { kind: 'seller' }> | null>;
  byJwt(token: string, carried?: CarriedEpoch): Promise<Extract<Principal, { kind: 'merchant' }> | null>;
  bySession(token: string, carried?: CarriedEpoch): Promise<Extract<Principal, { kind: 'merchant' }> | null>;
  isAdminToken(token: string): boolean;
  isInternalToken(token: string): boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthKind;
    mode?: ModeRule;
    /**
     * `carried`: the route's own statement reads the credential epoch beside its rows (or refuses itself when it
     * moved), so a cached credential costs the request no epoch read; the handler runs through `withCarriedEpoch`.
     */
    credential_epoch?: 'carried';
    /** Routes that must not count against the rate limit (health checks, metrics). */
    rate_limit?: false;
    /** Error codes (or statuses: every code of that status) the route can answer beyond the common ones; openapi.ts documents them. */
    errors?: (number | ErrorCode)[];
    /** The OpenAPI operationId of a route openapi.ts does not name. */
    operation_id?: string;
    /**
     * Multipart routes, for the OpenAPI request body (Fastify does not validate these): a required file field by its
     * description, or a field with its shape (`repeated` file parts, an optional `integer` field).
     */
    multipart_body?: Record<
      string,
      string | { description: string; repeated?: boolean; integer?: boolean; optional?: boolean }
    >;
  }
  interface FastifyRequest {
    principal: Principal;
    /**
     * On a `credential_epoch: 'carried'` route: the epoch the request's credential was verified under, which its
     * statement must still see; undefined when there is nothing left to check (authenticated again meanwhile).
     */
    credential_epoch: number | undefined;
    /** Authenticates the request again against a fresh epoch read (its cached credential's epoch moved). */
    reauthenticate(reply: import('fastify').FastifyReply): Promise<void>;
  }
}

export type { AppError };
