import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Axe finds no WCAG 2.1 A or AA violation on the page, and the page does not scroll sideways at `width`. */
export async function assertAccessibleAt(page: Page, what: string, width: number): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  assert.deepEqual(
    results.violations.map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    ),
    [],
    `${what} has no accessibility violation`,
  );
  const scroll_width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scroll_width <= width + 1, `${what} does not scroll sideways (${scroll_width}px)`);
}

/**
 * Each of `words` that the page shows as a word of its visible text outside ids, code, inputs and secrets (a Thai page
 * shows the Thai word of a status or an event, never the English one or the API's value).
 */
export function wordsShown(page: Page, words: readonly string[]): Promise<string[]> {
  return page.evaluate((words) => {
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (
        !parent ||
        parent.closest('.mono, pre, code, script, style, option, .secret, [hidden]') ||
        !parent.checkVisibility()
      )
        continue;
      for (const word of words)
        if (
          new RegExp(`(^|[^\\w])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w])`).test(node.textContent ?? '')
        )
          found.push(`${word} in "${node.textContent?.trim().slice(0, 60)}"`);
    }
    return found;
  }, words);
}

/**
 * A tab on the dashboard in `lang` at `width` (signed in when a session `cookie` is given), with the script errors
 * its pages raise.
 */
export async function dashboardTab(
  browser: Browser,
  base_url: string,
  lang: 'en' | 'th',
  width: number,
  cookie?: string,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    locale: lang === 'th' ? 'th-TH' : 'en-US',
  });
  const cookies: { name: string; value: string; url: string }[] = [{ name: 'mpay_lang', value: lang, url: base_url }];
  if (cookie) {
    const [name, value] = cookie.split('=') as [string, string];
    cookies.push({ name, value, url: base_url });
  }
  await context.addCookies(cookies);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { context, page, errors };
}
