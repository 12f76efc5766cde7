import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import jpeg from 'jpeg-js';
import jsqrModule from 'jsqr';
import { PNG } from 'pngjs';
import { validate } from 'promptparse';
import type { SlipReading } from './port.ts';
import { sniffImageType } from './receipt.ts';

/**
 * Reads a receipt image's slip-verification QR locally: the image is decoded (JPEG: jpeg-js, PNG: pngjs, WebP:
 * libwebp as WASM, HEIC: libheif as WASM), jsQR finds the QR, and promptparse checks that its text is a slip-verify
 * payload (EMVCo tags, CRC) and gives the sending bank and the transaction reference.
 */

interface Rgba {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

type Decode = (
  data: Uint8ClampedArray,
  width: number,
  height: number,
  options?: { inversionAttempts?: string },
) => { data: string } | null;
/** jsqr is CommonJS with a default export: under nodenext the function may sit on `.default`. */
const jsQR: Decode = (jsqrModule as unknown as { default?: Decode }).default ?? (jsqrModule as unknown as Decode);

const require = createRequire(import.meta.url);
/** Phone screenshots of slips are about 2 megapixels; larger photos are sampled down to this before the QR search. */
const MAX_SCAN_PIXELS = 3_000_000;
const MAX_DECODE_MEGAPIXELS = 50;

let webpDecoder:
  | Promise<(bytes: ArrayBuffer) => Promise<ImageData | { data: Uint8ClampedArray; width: number; height: number }>>
  | undefined;

async function decodeWebp(bytes: Uint8Array): Promise<Rgba> {
  webpDecoder ??= (async () => {
    const module = await import('@jsquash/webp/decode.js');
    // The WASM file is read from the package (no fetch: the process may be offline).
    const wasm = await readFile(require.resolve('@jsquash/webp/codec/dec/webp_dec.wasm'));
    await module.init(await WebAssembly.compile(wasm));
    return module.default;
  })();
  const decode = await webpDecoder;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const image = await decode(copy.buffer);
  return { data: image.data, width: image.width, height: image.height };
}

async function decodeHeic(bytes: Uint8Array): Promise<Rgba> {
  const { default: decode } = await import('heic-decode');
  const image = await decode({ buffer: bytes });
  return {
    data: new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength),
    width: image.width,
    height: image.height,
  };
}

async function decodeImage(bytes: Uint8Array): Promise<Rgba | null> {
  const type = sniffImageType(bytes);
  try {
    switch (type) {
      case 'image/png': {
        const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        return {
          data: new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.byteLength),
          width: png.width,
          height: png.height,
        };
      }
      case 'image/jpeg': {
        const image = jpeg.decode(bytes, {
          useTArray: true,
          formatAsRGBA: true,
          maxResolutionInMP: MAX_DECODE_MEGAPIXELS,
          maxMemoryUsageInMB: 512,
        });
        return {
          data: new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength),
          width: image.width,
          height: image.height,
        };
      }
      case 'image/webp':
        return await decodeWebp(bytes);
      case 'image/heic':
        return await decodeHeic(bytes);
      default:
        return null;
    }
  } catch {
    // A file whose header says image but whose body does not decode has no QR to read.
    return null;
  }
}

/** Every `step`-th pixel in both directions, so a large photo is searched at a bounded cost. */
function sampled(image: Rgba): Rgba {
  const step = Math.ceil(Math.sqrt((image.width * image.height) / MAX_SCAN_PIXELS));
  if (step <= 1) return image;
  const width = Math.floor(image.width / step);
  const height = Math.floor(image.height / step);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = (y * step * image.width + x * step) * 4;
      data.set(image.data.subarray(from, from + 4), (y * width + x) * 4);
    }
  }
  return { data, width, height };
}

/** The slip QR's payload, checked: its bank and reference, or null when the text is not a slip-verify payload. */
export function parseSlipPayload(text: string): { sending_bank: string; reference: string } | null {
  const parsed = validate.slipVerify(text.trim());
  if (!parsed?.transRef || !parsed.sendingBank) return null;
  return { sending_bank: parsed.sendingBank, reference: parsed.transRef };
}

/** What the image carries: a slip QR, another QR, no QR, or it is no image this reader decodes (a PDF). */
export async function readSlip(bytes: Uint8Array): Promise<SlipReading> {
  const image = await decodeImage(bytes);
  if (!image) return { kind: 'not_an_image' };
  const scan = sampled(image);
  const found = jsQR(scan.data, scan.width, scan.height, { inversionAttempts: 'attemptBoth' });
  if (!found) return { kind: 'no_qr' };
  const slip = parseSlipPayload(found.data);
  return slip ? { kind: 'slip', slip } : { kind: 'other_qr', text: found.data.slice(0, 512) };
}
