import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from './html.ts';

/**
 * The guides under docs/ (and the README and the typed client's README) as readable pages: `/docs/guides` lists
 * them, `/docs/guides/<name>` renders one, and links between them (and their images) point at these pages.
 */

export interface Guide {
  /** `payments`, `contract/merchant-payments-api-v1`, `readme`, `sdk`. */
  slug: string;
  title: string;
  /** Path from the repository root: `docs/payments.md`. */
  file: string;
}

/** The order a reader meets them in; guides not named here follow in name order. */
const ORDER = [
  'readme',
  'payments',
  'payouts',
  'pending-funds',
  'disputes',
  'settlements',
  'webhooks',
  'sandbox',
  'sdk',
  'api',
  'dashboard',
  'ledger',
  'operations',
  'security',
  'architecture',
  'performance',
];

const EXTRA: { slug: string; file: string }[] = [
  { slug: 'readme', file: 'README.md' },
  { slug: 'sdk', file: 'clients/typescript/README.md' },
];

export class GuideLibrary {
  readonly guides: Guide[];
  readonly images: Map<string, string>;
  readonly #root: string;
  readonly #by_file: Map<string, Guide>;

  private constructor(root: string, guides: Guide[], images: Map<string, string>) {
    this.#root = root;
    this.guides = guides;
    this.images = images;
    this.#by_file = new Map(guides.map((guide) => [guide.file, guide]));
  }

  /** Reads the guides present under `root` (the repository); none when there is no docs/ (an installed build). */
  static async load(root: string): Promise<GuideLibrary> {
    const guides: Guide[] = [];
    const images = new Map<string, string>();
    const docs = join(root, 'docs');
    const files = existsSync(docs)
      ? ((await readdir(docs, { recursive: true })) as string[]).map((file) => file.split('\\').join('/'))
      : [];
    const entries = [
      ...files
        .filter((file) => file.endsWith('.md'))
        .map((file) => ({ slug: file.replace(/\.md$/, ''), file: `docs/${file}` })),
      ...EXTRA.filter((extra) => existsSync(join(root, extra.file))),
    ];
    for (const entry of entries) {
      const text = await readFile(join(root, entry.file), 'utf8');
      const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? entry.slug;
      guides.push({ ...entry, title: entry.slug === 'readme' ? `Introduction: ${title}` : title });
    }
    for (const file of files.filter((name) => /\.(png|jpe?g|svg|webp)$/.test(name))) images.set(file, `docs/${file}`);
    const rank = (slug: string) => (ORDER.includes(slug) ? ORDER.indexOf(slug) : ORDER.length);
    guides.sort((a, b) => rank(a.slug) - rank(b.slug) || a.slug.localeCompare(b.slug));
    return new GuideLibrary(root, guides, images);
  }

  find(slug: string): Guide | undefined {
    return this.guides.find((guide) => guide.slug === slug);
  }

  /** An image's file on disk, by its path under docs/. */
  imageFile(name: string): string | undefined {
    const file = this.images.get(name);
    return file ? join(this.#root, file) : undefined;
  }

  /** Where a link written in `from` (a repository path) leads on the site: a guide, an image, or nowhere. */
  resolveLink(from: string, href: string): string | undefined {
    if (/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) return href;
    const [target = '', anchor] = href.split('#');
    const path = normalize(posix.join(posix.dirname(from), target))
      .split('\\')
      .join('/');
    const suffix = anchor ? `#${anchor}` : '';
    const guide = this.#by_file.get(path);
    if (guide) return `/docs/guides/${guide.slug}${suffix}`;
    if (path.startsWith('docs/') && this.images.has(path.slice('docs/'.length)))
      return `/docs/guides/${path.slice('docs/'.length)}`;
    return undefined;
  }

  /** A guide's markdown as HTML: headings carry GitHub's anchor ids, links go to the site's pages. */
  async render(guide: Guide): Promise<string> {
    const markdown = await readFile(join(this.#root, guide.file), 'utf8');
    const seen = new Map<string, number>();
    const library = this;
    const marked = new Marked({
      gfm: true,
      renderer: {
        heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Heading) {
          const base = githubSlug(token.text);
          const count = seen.get(base) ?? 0;
          seen.set(base, count + 1);
          const id = count === 0 ? base : `${base}-${count}`;
          return `<h${token.depth} id="${id}">${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
        },
        link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Link) {
          const text = this.parser.parseInline(token.tokens);
          const href = library.resolveLink(guide.file, token.href);
          if (href === undefined) return text;
          const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
          return `<a href="${escapeHtml(href)}"${title}>${text}</a>`;
        },
        // Wide code and tables scroll sideways; a keyboard user must be able to reach them to scroll.
        code(token: Tokens.Code) {
          const language = token.lang ? ` class="language-${escapeHtml(token.lang.split(/\s/)[0] ?? '')}"` : '';
          return `<pre tabindex="0"><code${language}>${escapeHtml(token.text)}</code></pre>\n`;
        },
        image(token: Tokens.Image) {
          const src = library.resolveLink(guide.file, token.href);
          if (src === undefined) return escapeHtml(token.text);
          return `<img src="${escapeHtml(src)}" alt="${escapeHtml(token.text)}" loading="lazy">`;
        },
      },
    });
    const html = marked.parse(markdown, { async: false });
    return html
      .replace(/<table>/g, '<div class="table-scroll" role="region" aria-label="Table" tabindex="0"><table>')
      .replace(/<\/table>/g, '</table></div>');
  }
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** The repository root this server runs from (guides are read from its docs/). */
export const REPOSITORY_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
