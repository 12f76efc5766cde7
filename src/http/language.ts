/** The two languages the pages speak, and how a page picks one. */
export type Lang = 'en' | 'th';

/** A text with `{name}` slots filled from `values` (a slot without a value renders empty). */
export function fill(template: string, values?: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => String(values?.[name] ?? ''));
}

/** The language the visitor chose (`explicit`: a query or a cookie), else the first of Accept-Language we speak. */
export function chosenLang(explicit: string | undefined, accept_language: string | undefined): Lang | undefined {
  if (explicit === 'th' || explicit === 'en') return explicit;
  const first = accept_language?.split(',')[0]?.trim().toLowerCase();
  if (first?.startsWith('th')) return 'th';
  if (first?.startsWith('en')) return 'en';
  return undefined;
}
