import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';
import type { ValidatorKind, ValidatorOutcome } from './port.ts';

export interface SlipTables {
  /** One slip shown for one owner, its identity and its stored verdict (migration 0210). */
  slips: {
    id: string;
    /** `payment:<id>:leg:<n>`, `pending_funds:<id>` or `cash_leg:<sell order id>` (plus `:fill:<buy order id>` when several buyers pay it). */
    owner: string;
    /** The owner's mode: identities are unique per mode (migration 0340). */
    is_sandbox: Generated<boolean>;
    sha256: string;
    reference: string | null;
    sending_bank: string | null;
    /** `<sending bank>:<reference>`, else `sha256:<hex>`: unique per mode among accepted slips. */
    identity: string;
    outcome: ValidatorOutcome | null;
    reason: string | null;
    validator_kind: ValidatorKind | null;
    validator_response: Json<Record<string, unknown>> | null;
    unverified_fields: ColumnType<string[], string | undefined, string>;
    accepted: Generated<boolean>;
    /** How often the provider was asked about this slip for this owner (counted before each call). */
    provider_asks: Generated<number>;
    created_at: Date;
    updated_at: Date;
  };
}

export type SlipRow = Selectable<SlipTables['slips']>;
