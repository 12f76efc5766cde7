import { readFile } from 'node:fs/promises';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import type { Guide, GuideLibrary } from './guides.ts';
import { documentHead, escapeHtml, scriptJson } from './html.ts';

/**
 * The API reference people read: `/docs` (the merchant document) and `/docs/admin` (the operator document) in
 * Scalar, served from its npm package (no CDN: a closed network works), and the guides at `/docs/guides`.
 */

const SCALAR_PREFIX = '/docs/scalar';
const SCALAR_SCRIPT = `${SCALAR_PREFIX}/js/scalar.js`;

/** HTTP method colours dark enough for text on white (WCAG AA, 4.5:1), and the light theme only. */
const REFERENCE_CSS = `
.light-mode, :root {
  --scalar-color-green: #0a6b45; --scalar-color-blue: #0b5cad; --scalar-color-orange: #9a4700;
  --scalar-color-red: #b3261e; --scalar-color-purple: #6b3fa0; --scalar-color-yellow: #7a5d00;
  --scalar-color-2: #3d3d3d; --scalar-color-3: #4f4f4f;
}
`;

function referencePage(title: string, document_url: string, other: { href: string; label: string }): string {
  const configuration = {
    url: document_url,
    withDefaultFonts: false,
    hideDarkModeToggle: true,
    forceDarkModeState: 'light',
    telemetry: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json',
    metaData: { title },
    customCss: REFERENCE_CSS,
  };
  // The configuration is ours, but `</script>` must never end the inline script early.
  const json = scriptJson(configuration);
  const head = `<meta name="description" content="${escapeHtml(title)}: every operation with its request, responses, errors and code samples (curl, @mpay/client)">
<link rel="alternate" type="application/json" href="${document_url}" title="OpenAPI document">`;
  return `${documentHead({ lang: 'en', title, head })}
<body>
<noscript><p>The reference needs JavaScript. The document itself is at <a href="${document_url}">${document_url}</a>; the guides are at <a href="/docs/guides">/docs/guides</a>; ${other.label} at <a href="${other.href}">${other.href}</a>.</p></noscript>
<div id="app"></div>
<script src="${SCALAR_SCRIPT}"></script>
<script>Scalar.createApiReference('#app', ${json})</script>
</body>
</html>
`;
}

const GUIDE_CSS = `
:root { color-scheme: light; --text: #1b1b1b; --muted: #4a4a4a; --link: #0b57d0; --line: #d0d4da; --code: #f3f4f6; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans Thai", sans-serif; color: var(--text); background: #fff; }
a { color: var(--link); }
a:focus-visible, pre:focus-visible, .table-scroll:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; }
.skip:focus { left: 1rem; z-index: 10; }
header { border-bottom: 1px solid var(--line); padding: .75rem 1.25rem; display: flex; gap: 1.25rem; flex-wrap: wrap; align-items: baseline; }
header .brand { font-weight: 700; color: var(--text); text-decoration: none; }
header nav ul { list-style: none; display: flex; gap: 1rem; margin: 0; padding: 0; flex-wrap: wrap; }
.layout { display: grid; grid-template-columns: minmax(12rem, 16rem) minmax(0, 1fr); gap: 2rem; max-width: 80rem; margin: 0 auto; padding: 1.25rem; }
.toc ul { list-style: none; margin: 0; padding: 0; }
.toc li { margin: .25rem 0; }
.toc a[aria-current="page"] { font-weight: 700; color: var(--text); }
main { min-width: 0; max-width: 52rem; }
main h1 { font-size: 2rem; line-height: 1.25; margin-top: 0; }
main h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); padding: .1em .3em; border-radius: 4px; }
pre { background: var(--code); padding: 1rem; overflow-x: auto; border-radius: 6px; }
pre code { padding: 0; background: none; }
.table-scroll { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: .4rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--code); }
img { max-width: 100%; height: auto; border: 1px solid var(--line); }
.guide-list li { margin: .4rem 0; }
.guide-list .file { color: var(--muted); font-size: .9rem; }
@media (max-width: 48rem) { .layout { grid-template-columns: 1fr; } .toc { border-bottom: 1px solid var(--line); padding-bottom: 1rem; } }
`;

function guidePage(library: GuideLibrary, current: Guide | undefined, title: string, content: string): string {
  const items = library.guides
    .map(
      (guide) =>
        `<li><a href="/docs/guides/${guide.slug}"${guide === current ? ' aria-current="page"' : ''}>${escapeHtml(guide.title)}</a></li>`,
    )
    .join('\n');
  return `${documentHead({ lang: 'en', title: `${title} · mpay docs`, head: `<style>${GUIDE_CSS}</style>` })}
<body>
<a class="skip" href="#main">Skip to the content</a>
<header>
<a class="brand" href="/docs/guides">mpay docs</a>
<nav aria-label="Documentation"><ul>
<li><a href="/docs">API reference</a></li>
<li><a href="/docs/guides"${current === undefined ? ' aria-current="page"' : ''}>Guides</a></li>
<li><a href="/docs/admin">Operator API</a></li>
<li><a href="/openapi.json">openapi.json</a></li>
</ul></nav>
</header>
<div class="layout">
<nav class="toc" aria-label="Guides"><ul>
${items}
</ul></nav>
<main id="main">
${content}
</main>
</div>
</body>
</html>
`;
}

function guideIndex(library: GuideLibrary): string {
  const items = library.guides.map(
    (guide) =>
      `<li><a href="/docs/guides/${guide.slug}">${escapeHtml(guide.title)}</a> <span class="file">(${escapeHtml(guide.file)})</span></li>`,
  );
  const list =
    items.length > 0
      ? `<ul class="guide-list">\n${items.join('\n')}\n</ul>`
      : "<p>No guides in this installation (they live in the repository's docs/).</p>";
  return `<h1>Guides</h1>
<p>How each part of mpay works and how to use it. The <a href="/docs">API reference</a> lists every operation with code
samples; the <a href="/docs/admin">operator API</a> the admin and internal ones.</p>
${list}`;
}

/** The guides as a markdown list for a document's description (the reference shows it on its first page). */
export function guideLinks(library: GuideLibrary): string {
  return library.guides.map((guide) => `- [${guide.title}](/docs/guides/${guide.slug})`).join('\n');
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  svg: 'image/svg+xml',
  webp: 'image/webp',
};

export async function installReference(app: FastifyInstance, library: GuideLibrary): Promise<void> {
  // Only the bundled script of the plugin is used; its own page sends readers to ours.
  await app.register(scalar, {
    routePrefix: SCALAR_PREFIX,
    configuration: { url: '/openapi.json' },
    logLevel: 'warn',
    hooks: {
      onRequest: async (request, reply) => {
        if (!request.url.startsWith(SCALAR_SCRIPT)) return reply.redirect('/docs', 302);
      },
      preHandler: async (_request, reply) => {
        reply.header('Cache-Control', 'public, max-age=86400');
      },
    },
  });

  const html = (body: string) => (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.type('text/html; charset=utf-8').send(body);
  const merchant_page = referencePage('mpay merchant API reference', '/openapi.json', {
    href: '/docs/admin',
    label: 'the operator API',
  });
  const operator_page = referencePage('mpay operator API reference (admin and internal)', '/openapi-admin.json', {
    href: '/docs',
    label: 'the merchant API',
  });
  const page_options = { schema: { hide: true }, config: { rate_limit: false as const } };
  app.get('/docs', page_options, html(merchant_page));
  app.get('/docs/', page_options, html(merchant_page));
  app.get('/docs/admin', page_options, html(operator_page));
  app.get('/docs/guides', page_options, html(guidePage(library, undefined, 'Guides', guideIndex(library))));

  app.get<{ Params: { '*': string } }>('/docs/guides/*', page_options, async (request, reply) => {
    const name = request.params['*'];
    const image = library.imageFile(name);
    if (image) {
      const type = IMAGE_TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream';
      return reply
        .type(type)
        .header('Cache-Control', 'public, max-age=3600')
        .send(await readFile(image));
    }
    const guide = library.find(name.replace(/\.md$/, ''));
    if (!guide) {
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(
          guidePage(
            library,
            undefined,
            'Not found',
            `<h1>No such guide</h1>\n<p>There is no guide "${escapeHtml(name)}". <a href="/docs/guides">All guides</a>.</p>`,
          ),
        );
    }
    return reply
      .type('text/html; charset=utf-8')
      .send(guidePage(library, guide, guide.title, await library.render(guide)));
  });
}
