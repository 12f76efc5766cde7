import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { browserTestsSkipped, launchChromium } from '../helpers/chromium.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const DOCS = new URL('../../docs/', import.meta.url);
const GUIDE_FILES = ((await readdir(DOCS, { recursive: true })) as string[])
  .filter((file) => file.endsWith('.md'))
  .map((file) => file.replace(/\.md$/, ''));

/** The hrefs of a page's links and images. */
function links(html: string): string[] {
  return [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!.replace(/&amp;/g, '&'));
}

describe('API reference and guides at /docs', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const get = (url: string) => t.request({ method: 'GET', url });

  it('serves the reference page with the Scalar script from this server, no CDN', async () => {
    for (const [url, document] of [
      ['/docs', '/openapi.json'],
      ['/docs/', '/openapi.json'],
      ['/docs/admin', '/openapi-admin.json'],
    ] as const) {
      const page = await get(url);
      assert.equal(page.statusCode, 200, url);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.body, /<html lang="en">/);
      assert.match(page.body, /<script src="\/docs\/scalar\/js\/scalar\.js"><\/script>/);
      assert.ok(page.body.includes(`"url":"${document}"`), url);
      assert.deepEqual(
        links(page.body).filter((href) => /^(https?:)?\/\//.test(href)),
        [],
        `${url} loads nothing from elsewhere`,
      );
    }
    const script = await get('/docs/scalar/js/scalar.js');
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    assert.equal(script.headers['cache-control'], 'public, max-age=86400');
    assert.ok(script.body.length > 1_000_000 && script.body.includes('createApiReference'));
    // The plugin's own page is not a second reference.
    const plugin_page = await get('/docs/scalar/');
    assert.deepEqual([plugin_page.statusCode, plugin_page.headers['location']], [302, '/docs']);
  });

  it("lists every guide of docs/ (and the README and the client's) and links them from the merchant document", async () => {
    const index = await get('/docs/guides');
    assert.equal(index.statusCode, 200);
    const description = (await get('/openapi.json')).json().info.description as string;
    for (const slug of [...GUIDE_FILES, 'readme', 'sdk']) {
      assert.ok(index.body.includes(`href="/docs/guides/${slug}"`), `index links ${slug}`);
      assert.ok(description.includes(`](/docs/guides/${slug})`), `the reference links ${slug}`);
    }
  });

  it('renders each guide readably, every link on it leading to a page that exists', async () => {
    const checked = new Set<string>();
    for (const slug of [...GUIDE_FILES, 'readme', 'sdk']) {
      const page = await get(`/docs/guides/${slug}`);
      assert.equal(page.statusCode, 200, slug);
      assert.match(page.body, /<html lang="en">/);
      assert.match(page.body, /<main id="main">\n<h1 id="[^"]+">/, `${slug} starts with its title`);
      assert.match(
        page.body,
        new RegExp(`href="/docs/guides/${slug.replace(/[/-]/g, '\\$&')}" aria-current="page"`),
        slug,
      );
      for (const href of links(page.body)) {
        if (!href.startsWith('/') || checked.has(href.split('#')[0]!)) continue;
        const target = href.split('#')[0]!;
        checked.add(target);
        assert.equal((await get(target)).statusCode, 200, `${slug} links ${href}`);
      }
    }
    assert.ok(checked.has('/docs/guides/checkout.png'), 'images are served');
    // Markdown links between guides become pages, anchors keep GitHub's ids.
    const readme = (await get('/docs/guides/readme')).body;
    assert.match(readme, /href="\/docs\/guides\/security#what-the-operator-must-set-in-production"/);
    assert.match((await get('/docs/guides/security')).body, /<h2 id="what-the-operator-must-set-in-production">/);
    const unknown = await get('/docs/guides/../../package.json');
    assert.notEqual(unknown.statusCode, 200);
    const missing = await get('/docs/guides/no-such-guide');
    assert.equal(missing.statusCode, 404);
    assert.match(missing.body, /No such guide/);
  });
});

const skip = browserTestsSkipped();

describe('API reference and guides in Chromium: no critical or serious axe violation', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  before(async () => {
    t = await startTestApp();
    base = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  async function audit(
    path: string,
    ready: (page: import('playwright-core').Page) => Promise<unknown>,
  ): Promise<{ serious: string[]; elsewhere: string[]; text: string }> {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    try {
      const page = await context.newPage();
      const elsewhere: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(base) && !request.url().startsWith('data:')) elsewhere.push(request.url());
      });
      await page.goto(`${base}${path}`, { waitUntil: 'load' });
      await ready(page);
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      const serious = results.violations
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
      return { serious, elsewhere, text: await page.locator('body').innerText() };
    } finally {
      await context.close();
    }
  }

  it('the merchant reference, an operation with its code samples, and the operator reference', async () => {
    const reference = await audit('/docs', (page) =>
      page.getByRole('heading', { name: 'Merchant Payments Service API', level: 1 }).waitFor({ timeout: 60_000 }),
    );
    assert.deepEqual(reference.serious, [], '/docs');
    assert.deepEqual(reference.elsewhere, [], '/docs reaches nothing beyond this server');
    assert.match(reference.text, /Guides/);

    const operation = await audit('/docs#tag/payments/POST/v1/trades', (page) =>
      page.getByText('@mpay/client').first().waitFor({ timeout: 60_000 }),
    );
    assert.deepEqual(operation.serious, [], '/docs#tag/payments/POST/v1/trades');

    const operator = await audit('/docs/admin', (page) =>
      page.getByRole('heading', { name: /operator/, level: 1 }).waitFor({ timeout: 60_000 }),
    );
    assert.deepEqual(operator.serious, [], '/docs/admin');
    assert.deepEqual(operator.elsewhere, []);
  });

  it('the guides index and guides with each kind of content (one template renders them all)', async () => {
    // Code blocks and an image (payments), long tables (contract), lists and inline code (api), the client's README.
    const guides = ['payments', 'contract/merchant-payments-api-v1', 'api', 'security', 'sdk', 'readme'];
    for (const path of ['/docs/guides', ...guides.map((slug) => `/docs/guides/${slug}`)]) {
      const guide = await audit(path, async () => undefined);
      assert.deepEqual(guide.serious, [], path);
      assert.deepEqual(guide.elsewhere, [], path);
    }
  });
});
