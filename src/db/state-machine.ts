import type { Kysely, Selectable, Updateable } from 'kysely';
import { AppError, type ErrorCode } from '../lib/errors.ts';
import type { Trx } from './database.ts';
import type { Database } from './schema.ts';

/** Tables whose rows carry an `id` and a `status`: the ones a state machine can drive. */
export type StatusTable = {
  [T in keyof Database]: Selectable<Database[T]> extends { id: string; status: string } ? T : never;
}[keyof Database];

type Column<T extends StatusTable> = keyof Selectable<Database[T]> & string;
type StatusOf<T extends StatusTable> = Selectable<Database[T]> extends { status: infer S extends string } ? S : never;
/** What a move may set beside the status: any other column (the status and the id are the move's own). */
export type MovePatch<T extends StatusTable> = Omit<Updateable<Database[T]>, 'id' | 'status'>;

/**
 * One resource's status machine: its table, every allowed move, the timestamp column set on entering a status, and
 * the 409 code of the contract that a refused or lost move answers.
 */
export interface StateMachine<T extends StatusTable> {
  table: T;
  /** How messages name one row: `A matched <noun> cannot become ...`. */
  noun: string;
  moves: Record<StatusOf<T>, readonly StatusOf<T>[]>;
  /** Set to the move's time on entering the status (not on a move that stays in it). */
  entered_at: Partial<Record<StatusOf<T>, Column<T>>>;
  /** Set to the move's time on every move, staying moves included. */
  touched_at?: Column<T>;
  /** The 409 code of the contract for a move that is not allowed, or lost to a concurrent one. */
  conflict: ErrorCode;
  /** When a refused move answers another code depending on where the row stands (pending funds: terminal or not). */
  refused?: (from: StatusOf<T>) => ErrorCode;
}

export const defineStateMachine = <T extends StatusTable>(machine: StateMachine<T>): StateMachine<T> => machine;

export const canMove = <T extends StatusTable>(machine: StateMachine<T>, from: StatusOf<T>, to: StatusOf<T>): boolean =>
  machine.moves[from].includes(to);

/**
 * The columns one move sets (the patch, the status, the machine's touched column and the entered status's timestamp),
 * after checking the move is allowed (the machine's 409 otherwise): what `moveStatus` writes, and what a caller that
 * writes many rows' moves in one statement applies in memory.
 */
export function moveColumns<T extends StatusTable>(
  machine: StateMachine<T>,
  row: { status: StatusOf<T> },
  to: StatusOf<T>,
  at: Date,
  patch: MovePatch<T> = {} as MovePatch<T>,
): Record<string, unknown> {
  if (!canMove(machine, row.status, to)) {
    throw new AppError(
      machine.refused?.(row.status) ?? machine.conflict,
      `A ${row.status} ${machine.noun} cannot become ${to}`,
    );
  }
  const stamp = to === row.status ? undefined : machine.entered_at[to];
  const set: Record<string, unknown> = { ...patch, status: to };
  if (machine.touched_at) set[machine.touched_at] = at;
  if (stamp) set[stamp] = at;
  return set;
}

/**
 * Applies one move inside the caller's transaction with `UPDATE ... WHERE id = <id> AND status = <from>`, so a
 * concurrent move loses cleanly with the machine's 409 instead of overwriting state. Answers the updated row.
 */
export async function moveStatus<T extends StatusTable>(
  trx: Trx,
  machine: StateMachine<T>,
  row: { id: string; status: StatusOf<T> },
  to: StatusOf<T>,
  at: Date,
  patch: MovePatch<T> = {} as MovePatch<T>,
): Promise<Selectable<Database[T]>> {
  const set = moveColumns(machine, row, to, at, patch);
  // The table name is a type parameter here, which Kysely's builder cannot follow; the machine's types guard the call.
  const untyped = trx as unknown as Kysely<Record<string, { id: string; status: string }>>;
  const updated = await untyped
    .updateTable(machine.table as string)
    .set(set as never)
    .where('id', '=', row.id)
    .where('status', '=', row.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated)
    throw new AppError(machine.conflict, `${capitalise(machine.noun)} ${row.id} changed status concurrently`);
  return updated as unknown as Selectable<Database[T]>;
}

const capitalise = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** `moveStatus` bound to one machine: what a module exports as its own `transition`. */
export const mover =
  <T extends StatusTable>(machine: StateMachine<T>) =>
  (
    trx: Trx,
    row: { id: string; status: StatusOf<T> },
    to: StatusOf<T>,
    at: Date,
    patch?: MovePatch<T>,
  ): Promise<Selectable<Database[T]>> =>
    moveStatus(trx, machine, row, to, at, patch);
