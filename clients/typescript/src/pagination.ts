import type { Page } from './types.ts';

/**
 * The answer of a list method: awaited, the first page (`{data, has_more, next_cursor}`); iterated with
 * `for await`, every item of every page, fetching the next page as the loop reaches it.
 */
export class PageRequest<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<T>>;
  #first: Promise<Page<T>> | undefined;

  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {
    this.#fetchPage = fetchPage;
  }

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.#fetchPage(undefined);
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: a list is awaitable on purpose (await gives its first page)
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.#firstPage();
    for (;;) {
      for (const item of page.data) yield item;
      if (!page.has_more || !page.next_cursor) return;
      page = await this.#fetchPage(page.next_cursor);
    }
  }

  /** Every item of every page in one array (stops at `limit` items; default 10,000). */
  async toArray(limit = 10_000): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) {
      if (items.length >= limit) break;
      items.push(item);
    }
    return items;
  }
}
