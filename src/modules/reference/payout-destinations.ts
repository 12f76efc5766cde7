import { Type, type Static } from 'typebox';
import type { Executor } from '../../db/database.ts';
import { AppError, type ErrorDetail } from '../../lib/errors.ts';
import type { Currency } from '../../lib/money.ts';
import type { BankDirectory } from './banks.ts';
import { PROMPTPAY_ID_PATTERN } from './promptpay.ts';

/**
 * Where a seller of PAY is paid its fiat: the rails a buyer can pay on. PromptPay and PayID carry only their own
 * currency; USD and SGD travel as bank transfers into a foreign-currency account at a Thai or Australian bank.
 */
export const PAYOUT_RAILS = ['promptpay', 'thai_bank', 'payid', 'au_bank'] as const;
export type PayoutRail = (typeof PAYOUT_RAILS)[number];

export const PAYOUT_RAILS_BY_CURRENCY: Record<Currency, readonly PayoutRail[]> = {
  THB: ['promptpay', 'thai_bank'],
  AUD: ['payid', 'au_bank'],
  USD: ['thai_bank', 'au_bank'],
  SGD: ['thai_bank', 'au_bank'],
};

const FIELDS_BY_RAIL: Record<PayoutRail, readonly DestinationField[]> = {
  promptpay: ['promptpay_id'],
  thai_bank: ['bank_code', 'account_number', 'account_name'],
  payid: ['payid'],
  au_bank: ['bsb', 'account_number', 'account_name'],
};
type DestinationField = 'promptpay_id' | 'bank_code' | 'account_number' | 'account_name' | 'payid' | 'bsb';
const ALL_FIELDS: readonly DestinationField[] = [
  'promptpay_id',
  'bank_code',
  'account_number',
  'account_name',
  'payid',
  'bsb',
];

/** What a merchant sends: one object for every rail, so every bad field can be named at once (checked by `parsePayoutDestination`). */
export const PayoutDestinationInput = Type.Object(
  {
    rail: Type.Union(
      [Type.Literal('promptpay'), Type.Literal('thai_bank'), Type.Literal('payid'), Type.Literal('au_bank')],
      { description: 'promptpay or thai_bank (THB), payid or au_bank (AUD), thai_bank or au_bank (USD, SGD)' },
    ),
    promptpay_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'promptpay: mobile (0812345678), national/tax id (13 digits) or e-wallet id (15)',
      }),
    ),
    bank_code: Type.Optional(
      Type.String({
        maxLength: 16,
        description: 'thai_bank: 3-digit Bank of Thailand code (GET /v1/reference/thai-banks) or its short code',
      }),
    ),
    account_number: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'thai_bank: 10 to 15 digits; au_bank: 5 to 9 digits (spaces and dashes ignored)',
      }),
    ),
    account_name: Type.Optional(
      Type.String({ maxLength: 200, description: "thai_bank, au_bank: the account holder's name" }),
    ),
    payid: Type.Optional(
      Type.String({
        maxLength: 254,
        description: 'payid: an email, an Australian mobile (04… or +614…) or an ABN (11 digits)',
      }),
    ),
    bsb: Type.Optional(Type.String({ maxLength: 16, description: 'au_bank: 6-digit BSB (062-000 or 062000)' })),
  },
  { additionalProperties: false, description: 'Where the seller is paid: the fields of its rail only' },
);
export type PayoutDestinationInput = Static<typeof PayoutDestinationInput>;

/** A destination as stored and shown (numbers without spaces or dashes; the bank's name beside its code). */
export const PayoutDestinationSchema = Type.Union(
  [
    Type.Object({ rail: Type.Literal('promptpay'), promptpay_id: Type.String() }),
    Type.Object({
      rail: Type.Literal('thai_bank'),
      bank_code: Type.String({ description: '3-digit Bank of Thailand code' }),
      bank_name: Type.String({ description: 'From the bank directory' }),
      account_number: Type.String(),
      account_name: Type.String(),
    }),
    Type.Object({ rail: Type.Literal('payid'), payid: Type.String() }),
    Type.Object({
      rail: Type.Literal('au_bank'),
      bsb: Type.String(),
      account_number: Type.String(),
      account_name: Type.String(),
    }),
  ],
  { description: 'Where a seller of PAY is paid' },
);
export type PayoutDestination = Static<typeof PayoutDestinationSchema>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const AU_MOBILE = /^(\+614|04)\d{8}$/;
const ABN = /^\d{11}$/;

export const payoutDestinationInvalid = (details: ErrorDetail[]) =>
  new AppError(
    'VALIDATION_ERROR',
    `Invalid payout destination: ${details.map((detail) => `${detail.field} ${detail.message}`).join('; ')}`,
    details,
  );

/**
 * Checks a destination against its rail (and, when given, the currency it is to carry) and returns it normalised.
 * Every problem is collected, so one 400 names every bad field (`<prefix>.<field>`).
 */
export async function parsePayoutDestination(
  input: PayoutDestinationInput,
  options: { banks: BankDirectory; currency?: Currency | undefined; prefix: string; executor?: Executor | undefined },
): Promise<PayoutDestination> {
  const problems: ErrorDetail[] = [];
  const field = (name: string) => `${options.prefix}.${name}`;
  const rail = input.rail;
  if (options.currency && !PAYOUT_RAILS_BY_CURRENCY[options.currency].includes(rail)) {
    problems.push({
      field: field('rail'),
      message: `${rail} does not carry ${options.currency}; use ${PAYOUT_RAILS_BY_CURRENCY[options.currency].join(' or ')}`,
    });
  }
  const wanted: readonly DestinationField[] = FIELDS_BY_RAIL[rail];
  for (const name of ALL_FIELDS) {
    const value = input[name];
    if (wanted.includes(name) && (value === undefined || value.trim() === ''))
      problems.push({ field: field(name), message: `is required for rail ${rail}` });
    if (!wanted.includes(name) && value !== undefined)
      problems.push({ field: field(name), message: `is not used by rail ${rail}` });
  }
  const digits = (value: string | undefined) => (value ?? '').replace(/[\s-]/g, '');
  const text = (value: string | undefined) => (value ?? '').trim();
  const check = (name: DestinationField, ok: boolean, message: string) => {
    if (input[name] !== undefined && text(input[name]) !== '' && !ok) problems.push({ field: field(name), message });
  };

  let destination: PayoutDestination | undefined;
  if (rail === 'promptpay') {
    const promptpay_id = digits(input.promptpay_id);
    check(
      'promptpay_id',
      new RegExp(PROMPTPAY_ID_PATTERN).test(promptpay_id),
      'must be a mobile number (10 digits), a national/tax id (13) or an e-wallet id (15)',
    );
    destination = { rail, promptpay_id };
  } else if (rail === 'thai_bank') {
    const code = text(input.bank_code);
    const bank =
      code === ''
        ? undefined
        : (await options.banks.list(options.executor)).find(
            (entry) => entry.code === code || entry.short_code.toLowerCase() === code.toLowerCase(),
          );
    check('bank_code', bank !== undefined, 'is not in the Thai bank directory (GET /v1/reference/thai-banks)');
    const account_number = digits(input.account_number);
    check('account_number', /^\d{10,15}$/.test(account_number), 'must be 10 to 15 digits');
    destination = {
      rail,
      bank_code: bank?.code ?? code,
      bank_name: bank?.name_en ?? '',
      account_number,
      account_name: text(input.account_name),
    };
  } else if (rail === 'payid') {
    const raw = text(input.payid);
    const compact = raw.replace(/[\s-]/g, '');
    const payid = EMAIL.test(raw) ? raw.toLowerCase() : compact;
    check(
      'payid',
      EMAIL.test(raw) || AU_MOBILE.test(compact) || ABN.test(compact),
      'must be an email, an Australian mobile (04… or +614…) or an ABN (11 digits)',
    );
    destination = { rail, payid };
  } else {
    const bsb = digits(input.bsb);
    check('bsb', /^\d{6}$/.test(bsb), 'must be 6 digits');
    const account_number = digits(input.account_number);
    check('account_number', /^\d{5,9}$/.test(account_number), 'must be 5 to 9 digits');
    destination = { rail, bsb, account_number, account_name: text(input.account_name) };
  }
  if (problems.length > 0) throw payoutDestinationInvalid(problems);
  return destination;
}

/** Does this (stored) destination's rail carry the currency? */
export function railCarries(destination: PayoutDestination, currency: Currency): boolean {
  return PAYOUT_RAILS_BY_CURRENCY[currency].includes(destination.rail);
}

/** The account a slip must show as its receiver (masked numbers on slips match partially). */
export function slipReceiver(destination: PayoutDestination): {
  promptpay_id?: string;
  account_number?: string;
  account_name?: string;
  payid?: string;
} {
  switch (destination.rail) {
    case 'promptpay':
      return { promptpay_id: destination.promptpay_id };
    case 'payid':
      return { payid: destination.payid };
    default:
      return { account_number: destination.account_number, account_name: destination.account_name };
  }
}
