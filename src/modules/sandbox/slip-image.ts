import { randomInt } from 'node:crypto';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { generate } from 'promptparse';
import QRCode from 'qrcode';

/**
 * Slip-like test images: a Thai bank slip's layout (a coloured header, lines of "text", the amount) with a real
 * slip-verification QR (promptparse's payload: sending bank + transaction reference) in its corner. Tests and
 * sandbox users make slips the local `slip_qr` validator reads; `variant` changes the picture but not the QR (the
 * same transfer photographed twice), `qr: 'none'` leaves the QR out, `qr: 'damaged'` prints one nobody can read.
 */
export interface SlipImageOptions {
  reference: string;
  sending_bank?: string;
  format?: 'png' | 'jpeg';
  variant?: number;
  qr?: 'slip' | 'none' | 'damaged';
}

const WIDTH = 360;
const HEIGHT = 540;
const MODULE_PX = 4;

/** A transaction reference shaped like a Thai bank's (date digits, then random). */
export function newSlipReference(): string {
  const digits = Array.from({ length: 12 }, () => randomInt(10)).join('');
  return `0${digits}BPM${randomInt(10_000).toString().padStart(4, '0')}`;
}

export function slipPayload(reference: string, sending_bank = '004'): string {
  return generate.slipVerify({ sendingBank: sending_bank, transRef: reference });
}

export function slipImage(options: SlipImageOptions): Buffer {
  const variant = options.variant ?? 0;
  const pixels = Buffer.alloc(WIDTH * HEIGHT * 4);
  const tint = (variant * 37) % 24;
  const fill = (x0: number, y0: number, w: number, h: number, rgb: [number, number, number]) => {
    for (let y = Math.max(0, y0); y < Math.min(HEIGHT, y0 + h); y++) {
      for (let x = Math.max(0, x0); x < Math.min(WIDTH, x0 + w); x++) {
        const at = (y * WIDTH + x) * 4;
        pixels[at] = rgb[0];
        pixels[at + 1] = rgb[1];
        pixels[at + 2] = rgb[2];
        pixels[at + 3] = 255;
      }
    }
  };
  fill(0, 0, WIDTH, HEIGHT, [250 - tint, 250 - tint / 2, 246]);
  fill(0, 0, WIDTH, 56, [0, 140 - tint, 80]);
  // Lines of "text": sender, receiver, date, amount; a photo's offset moves them.
  const shift = variant % 7;
  for (const [y, w] of [
    [80, 220],
    [104, 160],
    [150, 240],
    [174, 180],
    [220, 140],
    [270, 200],
  ] as const)
    fill(24 + shift, y + shift, w, 12, [60, 60, 70]);
  fill(24 + shift, 310 + shift, 150, 24, [20, 20, 20]);
  if (options.qr !== 'none') {
    const qr = QRCode.create(slipPayload(options.reference, options.sending_bank), { errorCorrectionLevel: 'M' });
    const size = qr.modules.size;
    const left = WIDTH - (size + 4) * MODULE_PX - 16;
    const top = HEIGHT - (size + 4) * MODULE_PX - 16;
    fill(left, top, (size + 4) * MODULE_PX, (size + 4) * MODULE_PX, [255, 255, 255]);
    for (let row = 0; row < size; row++) {
      for (let column = 0; column < size; column++) {
        if (qr.modules.get(row, column))
          fill(left + (column + 2) * MODULE_PX, top + (row + 2) * MODULE_PX, MODULE_PX, MODULE_PX, [0, 0, 0]);
      }
    }
    // Damaged: a stain over two finder patterns and the middle, beyond what error correction recovers.
    if (options.qr === 'damaged') {
      const span = size * MODULE_PX;
      fill(left, top, span / 2 + 8 * MODULE_PX, span / 2, [120, 90, 60]);
      fill(left + span / 2, top + span / 2, span / 2, span / 2 + 2 * MODULE_PX, [120, 90, 60]);
    }
  }
  if (options.format === 'jpeg')
    return Buffer.from(jpeg.encode({ data: pixels, width: WIDTH, height: HEIGHT }, 92 - (variant % 5)).data);
  const png = new PNG({ width: WIDTH, height: HEIGHT });
  pixels.copy(png.data);
  return PNG.sync.write(png);
}
