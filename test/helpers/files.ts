import { randomBytes } from 'node:crypto';
import jsqrModule from 'jsqr';
import { PNG } from 'pngjs';

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
/** jsqr is CommonJS with a default export: under nodenext the function sits on `.default`. */
const jsQR: Decode = (jsqrModule as unknown as { default?: Decode }).default ?? (jsqrModule as unknown as Decode);

export function decodeQr(png_bytes: Buffer): string | null {
  const png = PNG.sync.read(png_bytes);
  return (
    jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.byteLength), png.width, png.height)
      ?.data ?? null
  );
}

/** A small, valid PNG unlike any other (proof uploads refuse a file already used on another payment). */
export function uniquePng(): Buffer {
  const png = new PNG({ width: 4, height: 4 });
  randomBytes(png.data.length).copy(png.data);
  return PNG.sync.write(png);
}

/** A multipart/form-data body with one file field. */
export function multipart(
  field: string,
  bytes: Buffer,
  filename = 'proof.png',
  content_type = 'image/png',
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----mpay${randomBytes(8).toString('hex')}`;
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${content_type}\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A multipart/form-data body with several parts: files (bytes) and fields (strings), in order. */
export function multipartParts(parts: { name: string; value: Buffer | string }[]): {
  payload: Buffer;
  headers: Record<string, string>;
} {
  const boundary = `----mpay${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [index, part] of parts.entries()) {
    const head =
      typeof part.value === 'string'
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="slip-${index}.png"\r\nContent-Type: image/png\r\n\r\n`;
    chunks.push(Buffer.from(head), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
