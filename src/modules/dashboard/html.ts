import { escapeHtml, scriptJson } from '../../http/html.ts';

/**
 * Typed HTML: `html\`...\`` escapes every interpolated value unless it is already `Html` (built by `html` or `raw`),
 * so a page cannot print a merchant-supplied string unescaped by accident. Arrays are joined; null, undefined and
 * false render nothing.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

function render(value: Renderable): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value as string | number);
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? '';
  for (let index = 0; index < values.length; index++) out += render(values[index]) + (strings[index + 1] ?? '');
  return new Html(out);
}

/** Trusted markup only (constants of this module). */
export function raw(value: string): Html {
  return new Html(value);
}

/** JSON for a `<script type="application/json">` block: `<` escaped so no value can close the tag. */
export function jsonBlock(id: string, value: unknown): Html {
  return new Html(`<script type="application/json" id="${escapeHtml(id)}">${scriptJson(value)}</script>`);
}

/** A query string from the defined values (for links that keep filters). */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values))
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
