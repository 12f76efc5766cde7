/** The server-rendered pages' shared pieces: escaping, script data and the start of every document. */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text safe inside an element or a quoted attribute. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);
}

/** JSON inside a <script>: `<` escaped so no value can close the tag. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/**
 * A document from its doctype through `</head>`: language, charset, viewport, the title (escaped), then the page's
 * own head lines (trusted markup). A `personal` page (a buyer's checkout, a merchant's dashboard) is kept out of search
 * engines and asks for no favicon.
 */
export function documentHead(options: { lang: string; title: string; head?: string; personal?: boolean }): string {
  const personal = options.personal ? '\n<meta name="robots" content="noindex">\n<link rel="icon" href="data:,">' : '';
  return `<!doctype html>
<html lang="${options.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">${personal}
<title>${escapeHtml(options.title)}</title>${options.head ? `\n${options.head}` : ''}
</head>`;
}
