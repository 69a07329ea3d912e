// Benchmark: SillyTavern's world-info editor beside tavo's lorebook editor, on the same generated book of N
// entries (default 10,000; lib/bigBook.js, written for SillyTavern as its world-info JSON), in Debian's chromium.
// For each app, one navigation that fills the browser's cache, then three warm runs of, timed inside the page
// (performance.now(), from navigation start, by a MutationObserver installed before the page's scripts):
// - firstRowMs: the editor's first entry row is in the DOM (it is then clicked, as a user would);
// - formMs: the first entry's fields are in the DOM; formEditableMs: its content field is enabled;
//   formVisibleMs: the first frame in which the content field is hit-testable on screen (not clipped away);
// - allLoadedMs: every entry is loaded, where the page says so (tavo: "Showing N of N entries"; SillyTavern:
//   its pager's total, "1-25 .. N", which it shows once it holds the whole book);
// - searchMs / searchFrameMs: from the input event on the editor's search box with a string only entry 7777's
//   content has, to the list showing that entry alone (DOM, then the next frame);
// - domElements and rowsRendered, once everything above is on screen and 1 s has passed (before the search);
// - heapMB: the page's JS heap after a forced GC (CDP HeapProfiler.collectGarbage, Runtime.getHeapUsage), and
//   heapBeforeGcMB. DOM and heap are the whole page's: SillyTavern's holds its whole UI, so its runs also give
//   domElementsAtReady and heapAtReadyMB, before the book opens.
// SillyTavern has no address for a book: its runs navigate to its page, wait for its init (readyMs), open the
// World Info drawer and pick the book in the editor's select (at openAtMs; its `…AfterOpenMs` figures count from
// there), so its from-navigation figures include its start-up. tavo's runs navigate to /lorebooks/{id}.
// SillyTavern's list is paginated (pageSize: its default, 25 entries a page); tavo's is a virtualised list.
// Prints one JSON line with both apps' figures: each figure's median over the 3 runs, and the runs themselves.
//
// SillyTavern is not a dependency of this repository; install it outside as the header of bench/st-side-by-side.js
// says (lib/sillytavern.js starts it: fresh data root and config in a temporary folder, loopback only, no auth).
// Run: cd tests/e2e && ST_DIR=/tmp/st/SillyTavern node bench/st-lorebook.js [N]   (TAVO_BIN as for the tests)
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { startTavo, launchBrowser } from '../lib/harness.js';
import { bigBook } from '../lib/bigBook.js';
import { sillyTavernDir, startSillyTavern, sillyTavernReady, median } from '../lib/sillytavern.js';

const N = Number(process.argv.find((a) => /^\d+$/.test(a)) || 10000);
const ST_DIR = sillyTavernDir();
const RUNS = 3;
/** Only this entry's content has the needle (lib/bigBook.js). */
const NEEDLE = 'needle-in-the-haystack';
const NEEDLE_ENTRY = 7777;
const BOOK = 'Big book';
const work = mkdtempSync(join(tmpdir(), 'st-lorebook-'));

/** SillyTavern's `position` numbers (world_info_position in public/scripts/world-info.js). */
const ST_POSITION = /** @type {Record<string, number>} */ ({ lorebookBefore: 0, lorebookAfter: 1, atDepth: 4, topOfExampleMessages: 5, bottomOfExampleMessages: 6 });

/**
 * The book as SillyTavern world info: every field of its new-entry template (newWorldInfoEntryDefinition), with
 * its defaults where tavo's entry says nothing; the uid is the entry's index.
 * @param {ReturnType<typeof bigBook>} book
 */
function stWorldInfo(book) {
  /** @type {Record<string, any>} */
  const entries = {};
  book.entries.forEach((e, uid) => {
    entries[uid] = {
      uid, key: e.keywords, keysecondary: e.secondaryKeywords, comment: e.name, content: e.content,
      constant: e.strategy === 'constant', vectorized: false, selective: true, selectiveLogic: 0, addMemo: true,
      order: e.order, position: ST_POSITION[e.injectionPosition], disable: !e.enabled,
      ignoreBudget: false, excludeRecursion: false, preventRecursion: false,
      matchPersonaDescription: false, matchCharacterDescription: false, matchCharacterPersonality: false,
      matchCharacterDepthPrompt: false, matchScenario: false, matchCreatorNotes: false, delayUntilRecursion: 0,
      probability: 100, useProbability: true, depth: e.injectionDepth, outletName: '', group: '', groupOverride: false,
      groupWeight: 100, scanDepth: null, caseSensitive: null, matchWholeWords: null, useGroupScoring: null,
      automationId: '', role: 0, sticky: null, cooldown: null, delay: null,
      characterFilterNames: [], characterFilterTags: [], characterFilterExclude: false, triggers: [], displayIndex: uid,
    };
  });
  return { entries };
}

/**
 * Installed before the page's scripts: records when the first row, its fields and the "all loaded" sign appear,
 * and clicks the first row as soon as it is there. Nothing is recorded until `window.__armed` (set at once, or
 * when the book is picked).
 * @param {{armed: boolean, row: string, open: string, formInRow: boolean, form: string, content: string, loaded: string, loadedText: string}} c
 */
function observe(c) {
  const w = /** @type {any} */ (window);
  const marks = /** @type {Record<string, number>} */ ({});
  w.__marks = marks;
  w.__armed = c.armed;
  /** @type {Element|null} */ let first = null;
  /** @type {HTMLTextAreaElement|null} */ let content = null;
  /** The content field is on screen when the point just inside its top left corner hits it (clipping counts). */
  const visible = () => {
    if (!content) return;
    const r = content.getBoundingClientRect();
    const x = r.left + 8, y = r.top + 8;
    if (r.width > 0 && r.height > 0 && x < innerWidth && y > 0 && y < innerHeight && content.contains(document.elementFromPoint(x, y))) {
      marks.formVisibleMs = performance.now();
    } else if (performance.now() - marks.formMs < 20000) requestAnimationFrame(visible);
  };
  const check = () => {
    if (!w.__armed) return;
    if (!first) {
      first = document.querySelector(c.row);
      if (first) {
        marks.firstRowMs = performance.now();
        /** @type {HTMLElement} */ (first.querySelector(c.open)).click();
      }
    }
    if (content && !content.isConnected) content = null; // re-rendered: look again
    if (first && !content) {
      const form = (c.formInRow ? first : document).querySelector(c.form);
      const field = form && form.querySelector(c.content);
      if (field) {
        content = /** @type {HTMLTextAreaElement} */ (field);
        if (marks.formMs === undefined) {
          marks.formMs = performance.now();
          requestAnimationFrame(visible);
        }
      }
    }
    if (content && marks.formEditableMs === undefined && content.matches(':enabled')) marks.formEditableMs = performance.now();
    if (marks.allLoadedMs === undefined && [...document.querySelectorAll(c.loaded)].some((e) => e.textContent?.includes(c.loadedText))) marks.allLoadedMs = performance.now();
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['disabled'] });
}

/**
 * In the page: from the input event on the search box to the list's DOM holding only the row `only` (a
 * MutationObserver), and to the next frame after it. `rows` is the entry rows' selector.
 * @param {import('playwright-core').Page} page @param {{input: string, rows: string, only: string, q: string}} s
 * @returns {Promise<{searchMs: number, searchFrameMs: number}|{searchTimedOut: true, rowsShown: number}>}
 */
function search(page, s) {
  return page.evaluate((s) => new Promise((resolve) => {
    const input = /** @type {HTMLInputElement} */ (document.querySelector(s.input));
    const rows = () => document.querySelectorAll(s.rows);
    let dom = 0;
    const observer = new MutationObserver(() => {
      if (!dom && rows().length === 1 && document.querySelector(s.only)) {
        dom = performance.now() - t0;
        observer.disconnect();
        clearTimeout(timer);
        requestAnimationFrame(() => resolve({ searchMs: dom, searchFrameMs: performance.now() - t0 }));
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    const timer = setTimeout(() => { observer.disconnect(); resolve({ searchTimedOut: true, rowsShown: rows().length }); }, 30000);
    const t0 = performance.now();
    input.value = s.q;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }), s);
}

/**
 * One warm-up and RUNS measured runs of: `open` (navigate and open the book; returns extra figures), wait for
 * every mark, 1 s, count the DOM, weigh the heap, search.
 * @param {import('playwright-core').Page} page @param {() => Promise<Record<string, any>>} open
 * @param {string} rowSelector @param {{input: string, rows: string, only: string, q: string}|null} searchBox
 */
async function measure(page, open, rowSelector, searchBox) {
  const cdp = await page.context().newCDPSession(page);
  const runs = [];
  for (let i = 0; i <= RUNS; i++) {
    const extra = await open();
    await page.waitForFunction(() => {
      const m = /** @type {any} */ (window).__marks;
      return m && ['firstRowMs', 'formMs', 'formEditableMs', 'formVisibleMs', 'allLoadedMs'].every((k) => m[k] !== undefined);
    }, null, { timeout: 120000, polling: 100 }).catch(async (e) => {
      throw new Error(`${page.url()}: not every mark in 120 s: ${JSON.stringify(await page.evaluate(() => /** @type {any} */ (window).__marks))}`, { cause: e });
    });
    const marks = await page.evaluate(() => /** @type {Record<string, number>} */ ({ .../** @type {any} */ (window).__marks }));
    await page.waitForTimeout(1000);
    const dom = await page.evaluate((sel) => ({ domElements: document.getElementsByTagName('*').length, rowsRendered: document.querySelectorAll(sel).length }), rowSelector);
    const before = /** @type {any} */ (await cdp.send('Runtime.getHeapUsage')).usedSize;
    await cdp.send('HeapProfiler.collectGarbage');
    const after = /** @type {any} */ (await cdp.send('Runtime.getHeapUsage')).usedSize;
    const found = searchBox ? await search(page, searchBox) : {};
    if (i === 0) continue; // the warm-up: it filled the browser's cache
    /** @type {Record<string, any>} */
    const run = { ...extra };
    for (const [k, v] of Object.entries(marks)) {
      run[k] = Math.round(v);
      if (extra.openAtMs !== undefined) run[k.replace(/Ms$/, 'AfterOpenMs')] = Math.round(v - extra.openAtMs);
    }
    for (const [k, v] of Object.entries(found)) run[k] = typeof v === 'number' ? Math.round(v) : v;
    runs.push({ ...run, ...dom, heapMB: +(after / 1e6).toFixed(1), heapBeforeGcMB: +(before / 1e6).toFixed(1) });
  }
  await cdp.detach();
  /** @type {Record<string, any>} */
  const out = {};
  for (const k of Object.keys(runs[0])) {
    if (runs.every((r) => typeof r[k] === 'number')) out[k] = median(runs.map((r) => r[k]));
  }
  return { ...out, runs };
}

const out = /** @type {Record<string, any>} */ ({ loadavgBefore: readFileSync('/proc/loadavg', 'utf8').trim(), cpus: cpus().length, entries: N });
const book = bigBook(N);
const st = await startSillyTavern(ST_DIR, work, {
  prepare: (user) => {
    // Its books are the files of worlds/, named as the book; it lists them on every page load.
    mkdirSync(join(user, 'worlds'), { recursive: true });
    writeFileSync(join(user, 'worlds', BOOK + '.json'), JSON.stringify(stWorldInfo(book), null, 4));
  },
});
const tavo = await startTavo();
try {
  const searchable = N > NEEDLE_ENTRY;
  // --- SillyTavern: its page, the World Info drawer, then the book picked in the editor's select ---
  {
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.addInitScript(observe, {
        armed: false, row: '#world_popup_entries_list .world_entry', open: '.inline-drawer-toggle', formInRow: true,
        form: '.world_entry_edit', content: 'textarea[name="content"]', loaded: '#world_info_pagination .paginationjs-nav', loadedText: `.. ${N}`,
      });
      const cdp = await browser.context.newCDPSession(page);
      let sortOrder = '';
      const stats = await measure(page, async () => {
        await page.goto(st.url + '/');
        await sillyTavernReady(page);
        const readyMs = await page.evaluate(() => performance.now());
        // Its whole UI before the book opens, for scale: elements and heap (after a GC).
        const domElementsAtReady = await page.evaluate(() => document.getElementsByTagName('*').length);
        await cdp.send('HeapProfiler.collectGarbage');
        const heapAtReadyMB = +(/** @type {any} */ (await cdp.send('Runtime.getHeapUsage')).usedSize / 1e6).toFixed(1);
        sortOrder = await page.evaluate(() => /** @type {HTMLSelectElement} */ (document.querySelector('#world_info_sort_order')).selectedOptions[0]?.textContent?.trim() || '');
        await page.locator('#WIDrawerIcon').click();
        await page.locator('#WorldInfo.openDrawer #world_editor_select').waitFor({ state: 'attached' });
        await page.locator('#WorldInfo').waitFor({ state: 'visible' });
        await page.waitForTimeout(500); // the drawer's opening animation
        // Pick the book as its select2 box does: the select's value, then a change event (a DOM call, timed in the page).
        const openAtMs = await page.evaluate((name) => {
          const w = /** @type {any} */ (window);
          const option = /** @type {HTMLOptionElement} */ ([...document.querySelectorAll('#world_editor_select option')].find((o) => o.textContent === name));
          w.__armed = true;
          const t = performance.now();
          w.$('#world_editor_select').val(option.value).trigger('change');
          return t;
        }, BOOK);
        return { readyMs: Math.round(readyMs), openAtMs: Math.round(openAtMs), domElementsAtReady, heapAtReadyMB };
      }, '#world_popup_entries_list .world_entry', searchable ? {
        input: '#world_info_search', rows: '#world_popup_entries_list .world_entry', only: `#world_popup_entries_list .world_entry[uid="${NEEDLE_ENTRY}"]`, q: NEEDLE,
      } : null);
      // Its pager's "N / page" box (the search leaves it as it was); the list's sort order as the book opened.
      const pageSize = await page.evaluate(() => Number(/** @type {HTMLSelectElement|null} */ (document.querySelector('#world_info_pagination select'))?.value));
      // The search box's input handler is debounced (debounce_timeout.standard in public/scripts/constants.js): searchMs includes it.
      out.sillytavern = { version: st.version, pageSize, sortOrder, searchDebounceMs: 300, ...stats };
    } finally {
      await browser.close();
    }
  }
  // --- tavo: the book's route ---
  {
    const { id } = await tavo.api('POST', '/api/library/lorebook', book);
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.addInitScript(observe, {
        armed: true, row: '.entry-row', open: '.entry-open', formInRow: false,
        form: 'form[aria-label^="Entry "]', content: 'textarea', loaded: '[role=status]', loadedText: `Showing ${N} of ${N} entries`,
      });
      const stats = await measure(page, async () => {
        await page.goto(`${tavo.url}/lorebooks/${id}`);
        return {};
      }, '.entry-row', searchable ? {
        input: 'input[aria-label="Search"]', rows: '.entry-row', only: `.entry-row input[aria-label="Select Entry ${NEEDLE_ENTRY}"]`, q: NEEDLE,
      } : null);
      out.tavo = stats;
    } finally {
      await browser.close();
    }
  }
  out.loadavgAfter = readFileSync('/proc/loadavg', 'utf8').trim();
  console.log(JSON.stringify(out));
} finally {
  await tavo.stop();
  await st.stop();
  rmSync(work, { recursive: true, force: true });
}
