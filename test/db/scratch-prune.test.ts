import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pruneImages } from '../../src/db/scratch.ts';

describe('scratch database images', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mpay-prune-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('publishing an image deletes the images of other schemas untouched for an hour, and nothing else', () => {
    const hours_ago = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const files = {
      current: 'mpay-pglite-aaaaaaaaaaaaaaaa.tar',
      stale: 'mpay-pglite-bbbbbbbbbbbbbbbb.tar',
      recent: 'mpay-pglite-cccccccccccccccc.tar',
      empty_image: 'mpay-pglite-empty-0.5.16.tar',
      partial: 'mpay-pglite-dddddddddddddddd.tar.123.partial',
      other: 'someone-else.tar',
    };
    for (const name of Object.values(files)) writeFileSync(join(dir, name), 'x');
    for (const name of [files.current, files.stale, files.empty_image, files.partial, files.other])
      utimesSync(join(dir, name), hours_ago(2), hours_ago(2));
    utimesSync(join(dir, files.recent), hours_ago(0.5), hours_ago(0.5));

    pruneImages(dir, join(dir, files.current));
    assert.deepEqual(
      readdirSync(dir).sort(),
      [files.current, files.recent, files.empty_image, files.partial, files.other].sort(),
    );
  });
});
