// The lorebook editor at 10,000 entries (generated): it opens, searches over keys and
// content, filters, scrolls to the end with a bounded DOM (a virtualised list), and bulk
// edits are saved with the revision read. Timings go to target/web-artefacts/lorebook-bench.json
// (BENCHMARKS.md quotes them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { webFromDisk } from '../lib/webdisk.js';
import { startTavo, launchBrowser, shot, watchErrors, ARTEFACTS } from '../lib/harness.js';
import { entry, bigBook } from '../lib/bigBook.js';

const N = 10000;
/** Bounded DOM: the rows in view plus overscan, whatever the book's size. */
const MAX_ROWS = 40;

/** How many entries a search shows: the editor's rule (name, keys, secondary keys, content; case-insensitive). @param {string} q */
function expected(q) {
  const needle = q.toLowerCase();
  return Array.from({ length: N }, (_, i) => entry(i)).filter((e) =>
    [e.name, e.keywords.join('\n'), e.secondaryKeywords.join('\n'), e.content].join('\n').toLowerCase().includes(needle)).length;
}

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let id;
/** @type {Record<string, number>} */ const bench = {};

before(async () => {
  tavo = await startTavo();
  id = (await tavo.api('POST', '/api/library/lorebook', bigBook(N))).id;
  browser = await launchBrowser();
  await webFromDisk(browser.context);
});

after(async () => {
  mkdirSync(ARTEFACTS, { recursive: true });
  writeFileSync(join(ARTEFACTS, 'lorebook-bench.json'), JSON.stringify({ entries: N, ...bench }, null, 2));
  console.log('lorebook bench', JSON.stringify(bench));
  await browser?.close();
  await tavo?.stop();
});

/** @param {import('playwright-core').Page} page */
const rows = (page) => page.getByRole('list', { name: 'Entries' }).getByRole('listitem').count();

/**
 * In the page: from the input event on Search to the list's DOM showing `expect` (a
 * MutationObserver, so no frame wait is counted) and to the next frame after it.
 * @param {import('playwright-core').Page} page @param {string} q @param {string} expect
 * @returns {Promise<{dom: number, frame: number}>}
 */
function searchTimes(page, q, expect) {
  return page.evaluate(async ([q, expect]) => {
    const input = /** @type {HTMLInputElement} */ (document.querySelector('input[aria-label="Search"]'));
    const status = () => [...document.querySelectorAll('[role=status]')].map((e) => e.textContent || '').join(' ');
    let dom = 0;
    const done = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (!dom && status().includes(expect)) {
          dom = performance.now() - t0;
          observer.disconnect();
          requestAnimationFrame(() => resolve(null));
        }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const t0 = performance.now();
    input.value = q;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await done;
    return { dom, frame: performance.now() - t0 };
  }, [q, expect]);
}

/** @param {import('playwright-core').Page} page @param {string} q @param {string} expect */
const searchLatency = async (page, q, expect) => (await searchTimes(page, q, expect)).frame;

test('a 10,000-entry book opens, searches and scrolls with a bounded DOM', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const t0 = Date.now();
  await page.goto(`${tavo.url}/lorebooks/${id}`);
  await page.getByRole('status').getByText(`Showing ${N} of ${N} entries`).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: /^Entry 0\b/ }).click();
  await page.getByRole('form', { name: 'Entry Entry 0' }).waitFor();
  bench.openToInteractiveMs = Date.now() - t0;
  // The book comes in pages (a first one of 100 entries, then the rest side by side): from the
  // first request's start to the last one's end.
  bench.bookFetchMs = await page.evaluate((id) => {
    const pages = performance.getEntriesByType('resource').filter((e) => e.name.includes(`/api/library/lorebook/${id}/entries`));
    return pages.length ? Math.max(...pages.map((e) => e.responseEnd)) - Math.min(...pages.map((e) => e.startTime)) : -1;
  }, id);
  assert.ok(bench.bookFetchMs > 0, 'the book was read in pages');
  assert.ok((await rows(page)) <= MAX_ROWS, `rows in the DOM: ${await rows(page)}`);
  await shot(page, 'workbench-lorebook-10k');

  // Search over content, then over keys; the DOM stays bounded.
  bench.searchContentMs = await searchLatency(page, 'needle-in-the-haystack', `Showing 1 of ${N} entries`);
  await page.getByRole('button', { name: /^Entry 7777\b/ }).waitFor();
  bench.searchKeyMs = await searchLatency(page, 'word13', `Showing ${expected('word13')} of ${N} entries`);
  bench.searchClearMs = await searchLatency(page, '', `Showing ${N} of ${N} entries`);
  const dom = [];
  const frame = [];
  for (const q of ['key1', 'castle', 'key99', 'secret 5', 'entry 42', 'harbour keeps', 'word5', 'lore number 99']) {
    const t = await searchTimes(page, q, `Showing ${expected(q)} of ${N} entries`);
    dom.push(t.dom);
    frame.push(t.frame);
  }
  bench.searchDomMedianMs = dom.sort((a, b) => a - b)[4];
  bench.searchFrameMedianMs = frame.sort((a, b) => a - b)[4];
  await searchLatency(page, '', `Showing ${N} of ${N} entries`);

  // Scroll to the end: the last entry is rendered, still a bounded DOM.
  const list = page.getByRole('list', { name: 'Entries' });
  const s0 = Date.now();
  await list.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.getByRole('button', { name: /^Entry 9999\b/ }).waitFor();
  bench.scrollToEndMs = Date.now() - s0;
  assert.ok((await rows(page)) <= MAX_ROWS);
  await shot(page, 'workbench-lorebook-end');

  // Filters: position, strategy, state.
  await page.getByRole('combobox', { name: 'Filter by strategy' }).selectOption('constant');
  await page.getByRole('status').getByText(`Showing ${N / 50} of ${N} entries`).waitFor();
  await page.getByRole('combobox', { name: 'Filter by strategy' }).selectOption('');
  await page.getByRole('combobox', { name: 'Filter by position' }).selectOption('atDepth');
  await page.getByRole('status').getByText(`Showing ${N / 5} of ${N} entries`).waitFor();
  await page.getByRole('combobox', { name: 'Filter by position' }).selectOption('');
  await page.getByRole('combobox', { name: 'Filter by state' }).selectOption('disabled');
  const disabled = Array.from({ length: N }, (_, i) => i).filter((i) => i % 13 === 0).length;
  await page.getByRole('status').getByText(`Showing ${disabled} of ${N} entries`).waitFor();
  await page.getByRole('combobox', { name: 'Filter by state' }).selectOption('');
  assert.deepEqual(errors, []);
  await page.close();
});

test('bulk disable, duplicate and an entry edit are saved with the revision read', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/lorebooks/${id}`);
  await page.getByRole('status').getByText(`Showing ${N} of ${N} entries`).waitFor({ timeout: 20000 });
  await page.getByRole('searchbox', { name: 'Search' }).fill('word13');
  const word13 = Array.from({ length: N }, (_, i) => i).filter((i) => i % 97 === 13);
  await page.getByRole('status').getByText(`Showing ${word13.length} of ${N} entries`).waitFor();
  await page.getByRole('button', { name: 'Select all shown' }).click();
  await page.getByRole('button', { name: 'Disable selected' }).click();

  await page.getByRole('searchbox', { name: 'Search' }).fill('key4242');
  await page.getByRole('button', { name: /^Entry 4242\b/ }).click();
  const form = page.getByRole('form', { name: 'Entry Entry 4242' });
  await form.getByRole('textbox', { name: 'Content' }).fill('Rewritten lore.');
  await form.getByRole('spinbutton', { name: 'Probability' }).fill('40');
  await form.getByRole('textbox', { name: 'Inclusion group' }).fill('weather');
  await form.getByRole('button', { name: 'Duplicate entry' }).click();
  await page.getByRole('status').getByText(`Showing 2 of ${N + 1} entries`).waitFor();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').getByText(/^Saved ·/).waitFor({ timeout: 20000 });

  const book = await tavo.api('GET', `/api/library/lorebook/${id}`);
  assert.equal(book.entries.length, N + 1);
  for (const i of word13) assert.equal(book.entries.find((/** @type {any} */ e) => e.identifier === `e${i}`).enabled, false, `e${i} disabled`);
  const e4242 = book.entries.find((/** @type {any} */ e) => e.identifier === 'e4242');
  assert.equal(e4242.content, 'Rewritten lore.');
  assert.equal(e4242.probability, 40);
  assert.equal(e4242.groupName, 'weather');
  const at = book.entries.findIndex((/** @type {any} */ e) => e.identifier === 'e4242');
  assert.equal(book.entries[at + 1].name, 'Entry 4242 (copy)');
  assert.equal(book.entries[at + 1].content, 'Rewritten lore.');
  assert.equal(book.entries[3].enabled, true, 'others untouched');
  assert.deepEqual(errors, []);
  await page.close();
});
