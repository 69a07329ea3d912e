// Benchmark: the lorebook editor (`/lorebooks/{id}`) opening a generated book of N entries
// (default 10,000) in Debian's chromium, timed inside the page from navigation start:
// - firstRowMs: the first entry's row is drawn;
// - formMs: after clicking it (as soon as it is drawn), the entry's form is on screen;
// - allLoadedMs: the status says every entry is loaded ("Showing N of N entries");
// - bookFetchMs: the entry requests' time, as the browser saw it.
// Median of 5 warm navigations (after one that fills the browser's cache). With --profile, a
// CPU profile of one opening goes to target/web-artefacts/lorebook-open.cpuprofile and the
// ten functions with the most self time are printed.
// Run: node bench/lorebook.js [N] [--profile]   (TAVO_BIN as for the tests)
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTavo, launchBrowser, ARTEFACTS } from '../lib/harness.js';
import { bigBook } from '../lib/bigBook.js';

const N = Number(process.argv.find((a) => /^\d+$/.test(a)) || 10000);
const profile = process.argv.includes('--profile');

/** Installed before the page's scripts: records when the first row and the full status appear. */
function observe(/** @type {number} */ n) {
  const marks = /** @type {Record<string, number>} */ ({});
  /** @type {any} */ (window).__marks = marks;
  const check = () => {
    if (marks.firstRowMs === undefined) {
      const row = document.querySelector('.entry-row .entry-open');
      if (row) {
        marks.firstRowMs = performance.now();
        /** @type {HTMLElement} */ (row).click();
      }
    }
    if (marks.formMs === undefined && document.querySelector('form[aria-label^="Entry "]')) marks.formMs = performance.now();
    if (marks.allLoadedMs === undefined && document.body && document.body.textContent?.includes(`Showing ${n} of ${n} entries`)) marks.allLoadedMs = performance.now();
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
}

const tavo = await startTavo();
const browser = await launchBrowser();
const out = /** @type {Record<string, any>} */ ({ entries: N });
try {
  const { id } = await tavo.api('POST', '/api/library/lorebook', bigBook(N));
  const page = await browser.context.newPage();
  await page.addInitScript(observe, N);
  const open = async () => {
    await page.goto(`${tavo.url}/lorebooks/${id}`);
    await page.waitForFunction(() => {
      const m = /** @type {any} */ (window).__marks;
      return m && m.formMs !== undefined && m.allLoadedMs !== undefined;
    }, null, { timeout: 60000 });
    return page.evaluate(() => ({
      .../** @type {any} */ (window).__marks,
      bookFetchMs: performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/library/lorebook/')).reduce((t, e) => t + e.duration, 0),
    }));
  };
  await open();
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await open());
  for (const k of ['firstRowMs', 'formMs', 'allLoadedMs', 'bookFetchMs']) {
    out[k] = Math.round(runs.map((r) => r[k]).sort((a, b) => a - b)[2]);
  }
  out.runs = runs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)])));
  if (profile) {
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    await open();
    const { profile: p } = await cdp.send('Profiler.stop');
    mkdirSync(ARTEFACTS, { recursive: true });
    writeFileSync(join(ARTEFACTS, 'lorebook-open.cpuprofile'), JSON.stringify(p));
    const self = new Map();
    const dt = /** @type {number[]} */ (p.timeDeltas || []);
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    (p.samples || []).forEach((s, i) => {
      const n = byId.get(s);
      const f = n.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/\/[^/]+/, '').replace(/\?v=\w+/, '')}:${f.lineNumber + 1}`;
      self.set(key, (self.get(key) || 0) + (dt[i] || 0) / 1000);
    });
    out.topSelfMs = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${v.toFixed(1)} ${k}`);
  }
} finally {
  await browser.close();
  await tavo.stop();
}
console.log(JSON.stringify(out, null, 2));
