import { randomUUID } from 'node:crypto';
import QRCode from 'qrcode';

/** A real, unique PNG (the proof upload sniffs magic bytes and refuses a file used before). */
export const PNG = await QRCode.toBuffer(`ledger-slip-${randomUUID()}`, { type: 'png' });
