// Benchmark: SillyTavern's browser UI beside tavo's, on the same imported chat, in Debian's chromium.
// For each chat size N (default 100,000; several may be given) and each app, three runs of:
// - navigation → the chat's last message on screen (`totalMs`, from the page's navigation start), split into
//   navigation → app ready (`readyMs`) and opening the chat from the app's start screen (`openMs`);
// - DOM elements in the page and the messages rendered, once the last message shows and 1 s has passed
//   (and the DOM elements when the app was ready, before the chat opened);
// - bytes transferred by the first, cold load up to "app ready";
// - the page's JS heap after a forced GC (CDP Runtime.getHeapUsage), and before it.
// Prints one JSON line with both apps' figures: each figure's median over the 3 runs, and the runs themselves.
//
// SillyTavern is not a dependency of this repository; install it outside, as its npm package, e.g.:
//   mkdir -p /tmp/st && cd /tmp/st && npm pack sillytavern@1.19.0 && tar xzf sillytavern-1.19.0.tgz \
//     && mv package SillyTavern && cd SillyTavern && npm install --omit=dev
// (unpack it and install its dependencies inside it: with `npm install sillytavern` into another folder the
// dependencies land outside its server directory and it refuses to read its own image .wasm files.)
// Run: cd tests/e2e && ST_DIR=/tmp/st/SillyTavern node bench/st-side-by-side.js [N ...]   (TAVO_BIN as for the tests)
//
// The script starts its own `node server.js` from ST_DIR with a fresh data root and config in a temporary
// folder (loopback only, no auth, no browser launch, no update/model downloads) on a free port (lib/sillytavern.js),
// and its own `tavo serve`. SillyTavern's first start in a new data root compiles its frontend libraries (~30 s here).
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTavo, launchBrowser, SERAPHINA } from '../lib/harness.js';
import { jsonl } from '../lib/benchChat.js';
import { sillyTavernDir, startSillyTavern, sillyTavernReady, median } from '../lib/sillytavern.js';

const SIZES = process.argv.slice(2).map(Number).filter((n) => n > 0);
if (!SIZES.length) SIZES.push(100000);
const ST_DIR = sillyTavernDir();
const RUNS = 3;
const work = mkdtempSync(join(tmpdir(), 'st-bench-'));

/**
 * Three runs of: navigate to `url`, wait until `ready` resolves, open the chat with `open` (which returns the
 * page's performance.now() when it began), wait for `last` to be visible; then count and weigh the page.
 * @param {import('playwright-core').Page} page @param {string} url @param {() => Promise<void>} ready
 * @param {() => Promise<number>} open @param {import('playwright-core').Locator} last @param {string} messageSelector
 */
async function measure(page, url, ready, open, last, messageSelector) {
  const cdp = await page.context().newCDPSession(page);
  const runs = [];
  let coldTransferKB = 0;
  for (let i = 0; i < RUNS; i++) {
    await page.goto(url);
    await ready();
    const readyMs = await page.evaluate(() => performance.now());
    // What the app's first load (fresh browser profile, empty cache) transferred by then: HTML, JS, CSS, images, API.
    if (i === 0) coldTransferKB = await page.evaluate(() => Math.round(/** @type {PerformanceResourceTiming[]} */ ([...performance.getEntriesByType('navigation'),
      ...performance.getEntriesByType('resource')]).reduce((s, e) => s + (e.transferSize || 0), 0) / 1024));
    const domAtReady = await page.evaluate(() => document.getElementsByTagName('*').length);
    const t0 = await open();
    await last.waitFor({ timeout: 300000 });
    const t1 = await page.evaluate(() => performance.now());
    const inViewport = await last.evaluate((el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
    await page.waitForTimeout(1000);
    const dom = await page.evaluate((sel) => ({ elements: document.getElementsByTagName('*').length, messages: document.querySelectorAll(sel).length }), messageSelector);
    const before = /** @type {any} */ (await cdp.send('Runtime.getHeapUsage')).usedSize;
    await cdp.send('HeapProfiler.collectGarbage');
    const after = /** @type {any} */ (await cdp.send('Runtime.getHeapUsage')).usedSize;
    runs.push({ totalMs: Math.round(t1), readyMs: Math.round(readyMs), openMs: Math.round(t1 - t0), lastMessageInViewport: inViewport,
      domElementsAtReady: domAtReady, domElements: dom.elements, messagesRendered: dom.messages, heapMB: +(after / 1e6).toFixed(1), heapBeforeGcMB: +(before / 1e6).toFixed(1) });
  }
  await cdp.detach();
  /** @param {string} k */
  const med = (k) => median(runs.map((r) => /** @type {any} */ (r)[k]));
  return { totalMs: med('totalMs'), readyMs: med('readyMs'), openMs: med('openMs'), domElementsAtReady: med('domElementsAtReady'), domElements: med('domElements'),
    messagesRendered: med('messagesRendered'), heapMB: med('heapMB'), heapBeforeGcMB: med('heapBeforeGcMB'), coldTransferKB, runs };
}

const out = /** @type {Record<string, any>} */ ({ loadavgBefore: readFileSync('/proc/loadavg', 'utf8').trim(), cpus: (await import('node:os')).cpus().length, sizes: SIZES });
const st = await startSillyTavern(ST_DIR, work);
const tavo = await startTavo();
try {
  // --- set-up: the Seraphina card in both, then each chat ---
  const card = new Blob([readFileSync(SERAPHINA)]);
  const f = new FormData();
  f.append('avatar', card, 'Seraphina.png');
  f.append('file_type', 'png');
  const avatar = (await (await st.post('/api/characters/import', f)).json()).file_name + '.png';
  const stChar = await (await st.post('/api/characters/get', { avatar_url: avatar })).json();
  // Clicking a character opens the chat file named in its card's `chat` field: write the chat under that name.
  const stChatDir = join(st.user, 'chats', avatar.replace(/\.png$/, ''));
  mkdirSync(stChatDir, { recursive: true });
  const tf = new FormData();
  tf.append('file', card, 'Seraphina.png');
  /** @param {FormData} fd */
  const tavoUpload = (fd) => fetch(tavo.url + '/api/import', { method: 'POST', body: fd, headers: { 'x-tavo-request': '1' } }).then((r) => r.json());
  await tavoUpload(tf);
  const settingsNow = JSON.parse(readFileSync(join(st.user, 'settings.json'), 'utf8'));
  out.sillytavern = { version: st.version, chatTruncationSetting: settingsNow.power_user?.chat_truncation ?? 'unset (its default applies)' };
  out.tavo = {};

  for (const n of SIZES) {
    const text = jsonl(n);
    writeFileSync(join(stChatDir, stChar.chat + '.jsonl'), text);
    const fd = new FormData();
    fd.append('file', new Blob([text]), `chat-${n}.jsonl`);
    const chatId = (await tavoUpload(fd)).results[0].chatId;

    // --- SillyTavern ---
    {
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        const sel = `.recentChat[data-avatar="${avatar}"]`;
        out.sillytavern[n] = await measure(page, st.url + '/',
          async () => {
            // Ready: its init finished (APP_READY, which it re-fires to late listeners) and the welcome screen
            // lists the chat under "Recent Chats" (it reads every chat file for that list).
            await sillyTavernReady(page);
            await page.locator(sel).waitFor({ timeout: 120000 });
          },
          // Open it as a user does from the welcome screen: click its "Recent Chats" entry (the same as picking the
          // character in the list, since it is the character's current chat). A DOM click, timed in the page, as
          // tavo's pushState below.
          () => page.evaluate((s) => { const t = performance.now(); /** @type {HTMLElement} */ (document.querySelector(s)).click(); return t; }, sel),
          page.locator('#chat .mes', { hasText: `Message ${n - 1}:` }),
          '#chat .mes');
        out.sillytavern[n].chatTruncation = await page.evaluate(() => /** @type {any} */ (window).SillyTavern.getContext().powerUserSettings.chat_truncation);
      } finally {
        await browser.close();
      }
    }
    // --- tavo: as long-chat.js, library on screen, then the chat's route ---
    {
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        out.tavo[n] = await measure(page, tavo.url + '/',
          () => page.getByRole('heading', { name: 'Characters' }).waitFor(),
          () => page.evaluate((id) => { const t = performance.now(); history.pushState(null, '', '/chats/' + id); dispatchEvent(new PopStateEvent('popstate')); return t; }, chatId),
          page.locator('article.message').getByText(`Message ${n - 1}:`),
          'article.message');
      } finally {
        await browser.close();
      }
    }
  }
  out.loadavgAfter = readFileSync('/proc/loadavg', 'utf8').trim();
  console.log(JSON.stringify(out));
} finally {
  await tavo.stop();
  await st.stop();
  rmSync(work, { recursive: true, force: true });
}
