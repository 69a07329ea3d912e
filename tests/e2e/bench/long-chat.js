// Benchmark: the app on loopback in Debian's chromium. Prints JSON figures:
// - the whole app's transfer size (brotli, as served: index.html and every file it names or
//   maps), what the library screen alone loads, and the library's time to interactive;
// - a chat of N messages (default 100,000, imported as a SillyTavern JSONL): time from
//   navigation to its last message on screen;
// - DOM nodes after scrolling back through 5,000 messages;
// - main-thread cost of one streamed token in a 2,000-message chat.
// Run: node bench/long-chat.js [N]   (TAVO_BIN / MOCK_PROVIDER_BIN as for the tests)
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, SERAPHINA } from '../lib/harness.js';
import { jsonl } from '../lib/benchChat.js';

const N = Number(process.argv[2] || 100000);
const dir = mkdtempSync(join(tmpdir(), 'tavo-bench-'));


const words = 'streamed tokens arrive one by one and only one message re-renders '.split(' ');
const mock = await startMock({ turns: [{ text: words.join(' ').repeat(20), delayMs: 5, chunk: 4 }], repeatLast: true });
const tavo = await startTavo({ mock });
const out = /** @type {Record<string, any>} */ ({ messages: N });
const browser = await launchBrowser();
try {
  const form = new FormData();
  form.append('file', new Blob([await (await import('node:fs/promises')).readFile(SERAPHINA)]), 'Seraphina.png');
  /** @param {FormData} f */
  const upload = (f) => fetch(tavo.url + '/api/import', { method: 'POST', body: f, headers: { 'x-tavo-request': '1' } }).then((r) => r.json());
  await upload(form);
  /** @param {number} n */
  const importChat = async (n) => {
    const file = join(dir, `chat-${n}.jsonl`);
    writeFileSync(file, jsonl(n));
    const f = new FormData();
    f.append('file', new Blob([await (await import('node:fs/promises')).readFile(file)]), `chat-${n}.jsonl`);
    const t = performance.now();
    const r = await upload(f);
    return { id: r.results[0].chatId, importMs: Math.round(performance.now() - t) };
  };

  const page = await browser.context.newPage();
  // Time to interactive: navigation start → the library's search box answers.
  await page.goto(tavo.url + '/');
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  const tti = [];
  for (let i = 0; i < 5; i++) {
    await page.goto(tavo.url + '/');
    await page.getByRole('heading', { name: 'Characters' }).waitFor();
    tti.push(await page.evaluate(() => performance.now()));
  }
  out.interactiveMs = Math.round(tti.sort((a, b) => a - b)[2]);
  // This machine's floor for the same measure: a page holding only the heading, answered by the
  // browser itself (no server, no script), timed the same way (navigation start → heading seen).
  const floorPage = await browser.context.newPage();
  await floorPage.route(tavo.url + '/floor', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>floor</title><h2>Characters</h2>' }));
  const floor = [];
  for (let i = 0; i < 5; i++) {
    await floorPage.goto(tavo.url + '/floor');
    await floorPage.getByRole('heading', { name: 'Characters' }).waitFor();
    floor.push(await floorPage.evaluate(() => performance.now()));
  }
  out.floorInteractiveMs = Math.round(floor.sort((a, b) => a - b)[2]);
  await floorPage.close();
  // What the library screen loaded (HTML + JS + CSS, brotli as served; avatars and API answers
  // left out) — the rest of the app loads when its screens are first drawn.
  out.libraryBytes = await page.evaluate(() =>
    /** @type {PerformanceResourceTiming[]} */ ([...performance.getEntriesByType('resource'), ...performance.getEntriesByType('navigation')])
      .filter((e) => !e.name.includes('/api/') && /(\.m?js|\.css|\.svg|\/)$/.test(new URL(e.name).pathname))
      .reduce((s, e) => s + (e.encodedBodySize || 0), 0));
  // The whole app: index.html and every file it names or maps (every module of every screen,
  // the vendored libraries, the style sheets), each as the server sends it with brotli.
  const sizeOf = async (/** @type {string} */ path) => {
    const r = await fetch(tavo.url + path, { headers: { 'accept-encoding': 'br', accept: 'text/html' } });
    const body = await r.arrayBuffer();
    return { length: Number(r.headers.get('content-length') || body.byteLength), text: path === '/' ? new TextDecoder().decode(body) : '' };
  };
  const index = await fetch(tavo.url + '/', { headers: { accept: 'text/html' } }).then((r) => r.text());
  const named = new Set(
    [...index.matchAll(/(?:src|href)="(\/[^"]+)"/g), ...index.matchAll(/"(\/(?:app|vendor)\/[^"]+)"/g)].map((m) => m[1].replace(/\?.*$/, '')),
  );
  let whole = (await sizeOf('/')).length;
  for (const path of named) whole += (await sizeOf(path)).length;
  out.appBytes = whole;
  out.appFiles = named.size + 1;

  const big = await importChat(N);
  out.importMs = big.importMs;
  const opens = [];
  for (let i = 0; i < 3; i++) {
    await page.goto(tavo.url + '/');
    await page.getByRole('heading', { name: 'Characters' }).waitFor();
    const t0 = await page.evaluate(() => performance.now());
    await page.evaluate((id) => { history.pushState(null, '', '/chats/' + id); dispatchEvent(new PopStateEvent('popstate')); }, big.id);
    await page.locator('article.message').getByText(`Message ${N - 1}:`).waitFor();
    opens.push((await page.evaluate(() => performance.now())) - t0);
  }
  out.lastMessageShownMs = Math.round(opens.sort((a, b) => a - b)[1]);

  // Scroll back through 5,000 messages.
  const t1 = performance.now();
  for (let guard = 0; guard < 2000; guard++) {
    const floor = await page.evaluate(() => {
      const el = document.querySelector('.messages');
      if (el) el.scrollTop = 0;
      const first = document.querySelector('article.message .floor');
      return first ? Number(first.textContent?.slice(1)) : 0;
    });
    if (floor <= N - 5000) break;
    await page.waitForTimeout(16);
  }
  out.scrollBack5000Ms = Math.round(performance.now() - t1);
  out.domNodesAfterScrollBack = await page.evaluate(() => document.getElementsByTagName('*').length);

  // One streamed token in a 2,000-message chat: main-thread time per animation frame that applies deltas.
  const mid = await importChat(2000);
  await page.goto(`${tavo.url}/chats/${mid.id}`);
  await page.locator('article.message').getByText('Message 1999:').waitFor();
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const before = /** @type {any} */ (await cdp.send('Performance.getMetrics')).metrics;
  await page.getByRole('textbox', { name: 'Message' }).fill('go');
  await page.getByRole('button', { name: 'Send' }).click();
  // Stop shows while the reply streams; Send again once it is over (waiting for Send alone
  // could end before the reply started).
  await page.getByRole('button', { name: 'Stop' }).waitFor({ timeout: 30000 });
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 120000 });
  const after = /** @type {any} */ (await cdp.send('Performance.getMetrics')).metrics;
  /** @param {any[]} m @param {string} k */
  const val = (m, k) => m.find((x) => x.name === k)?.value || 0;
  const tokens = Math.ceil((words.join(' ').repeat(20).length) / 4);
  const busy = (val(after, 'ScriptDuration') + val(after, 'LayoutDuration') + val(after, 'RecalcStyleDuration') + val(after, 'TaskDuration') * 0) -
    (val(before, 'ScriptDuration') + val(before, 'LayoutDuration') + val(before, 'RecalcStyleDuration'));
  out.streamTokens = tokens;
  out.mainThreadMsPerToken = Number(((busy * 1000) / tokens).toFixed(3));
  out.layoutCount = val(after, 'LayoutCount') - val(before, 'LayoutCount');
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
  await tavo.stop();
  mock.stop();
}
