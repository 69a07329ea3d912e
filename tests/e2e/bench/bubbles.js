// Benchmark: a chat of N script bubbles (default 200) in Debian's chromium. Prints JSON:
// time from navigation to the newest bubble's script having run, how many frames exist then
// (they are created only near the screen), the worst and 95th-percentile animation-frame gaps
// while scrolling through the whole chat and back (jank), the frames alive after it, and the
// page's JS heap plus the renderer processes' memory.
// Run: node bench/bubbles.js [N]   (TAVO_BIN / MOCK_PROVIDER_BIN as for the tests)
import { execFileSync } from 'node:child_process';
import { startTavo, launchBrowser } from '../lib/harness.js';
import { bubbleChat, addMessage } from '../lib/bubbles.js';

const N = Number(process.argv[2] || 200);
const tavo = await startTavo({ settings: { 'rendering.javascript': 'auto' } });
const browser = await launchBrowser();
const out = /** @type {Record<string, any>} */ ({ bubbles: N });
try {
  const { chatId, characters } = await bubbleChat(tavo, ['Bench'], 'Bench');
  for (let i = 0; i < N; i++) {
    await addMessage(tavo, chatId, `<div class="panel" style="padding:8px;border:1px solid #888;border-radius:8px"><b>Status ${i}</b>
<ul><li>HP <span id="hp">?</span></li><li>floor <span id="f">?</span></li></ul></div>
<script>(async () => { const me = await tavo.message.current(); tavo.set('hp', ${i}, 'message'); document.getElementById('hp').textContent = tavo.get('hp', 'message'); document.getElementById('f').textContent = me.id; })();</script>`, characters[0]);
  }
  const page = await browser.context.newPage();
  await page.goto(tavo.url + '/');
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  const t0 = await page.evaluate(() => performance.now());
  await page.evaluate((id) => { history.pushState(null, '', '/chats/' + id); dispatchEvent(new PopStateEvent('popstate')); }, chatId);
  await page.frameLocator('iframe.bubble-frame').last().getByText(`Status ${N - 1}`).waitFor();
  await page.frameLocator('iframe.bubble-frame').last().locator('#hp', { hasText: String(N - 1) }).waitFor();
  out.newestBubbleRanMs = Math.round((await page.evaluate(() => performance.now())) - t0);
  await page.waitForTimeout(500);
  out.framesAfterOpen = await page.locator('iframe.bubble-frame').count();
  out.messagesInDom = await page.locator('article.message').count();
  // Scroll to the top (the list widens its window as it goes) and back, recording frame gaps.
  const gaps = await page.evaluate(async () => {
    const el = /** @type {HTMLElement} */ (document.querySelector('.messages'));
    const d = [];
    let last = performance.now();
    let run = true;
    const tick = () => { const now = performance.now(); d.push(now - last); last = now; if (run) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    for (let pass = 0; pass < 12 && el.scrollTop > 0; pass++) {
      for (let i = 0; i < 40 && el.scrollTop > 0; i++) { el.scrollTop -= 150; await new Promise((r) => requestAnimationFrame(r)); }
    }
    for (let i = 0; i < 400 && el.scrollTop + el.clientHeight < el.scrollHeight - 2; i++) { el.scrollTop += 150; await new Promise((r) => requestAnimationFrame(r)); }
    run = false;
    return d.sort((a, b) => a - b);
  });
  out.scrollFrames = gaps.length;
  out.frameGapP95Ms = Math.round(gaps[Math.floor(gaps.length * 0.95)]);
  out.frameGapMaxMs = Math.round(gaps[gaps.length - 1]);
  out.framesGapOver50ms = gaps.filter((g) => g > 50).length;
  await page.waitForTimeout(1000);
  out.framesAfterScroll = await page.locator('iframe.bubble-frame').count();
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = /** @type {any} */ (await cdp.send('Performance.getMetrics')).metrics;
  out.pageJsHeapMB = Number((metrics.find((/** @type {any} */ m) => m.name === 'JSHeapUsedSize').value / 1048576).toFixed(1));
  // Resident memory of every chromium renderer process (the app's and the frames').
  const ps = execFileSync('ps', ['-eo', 'rss,args'], { encoding: 'utf8' }).split('\n').filter((l) => /chromium.*--type=renderer/.test(l));
  out.rendererProcesses = ps.length;
  out.rendererRssMB = Math.round(ps.reduce((s, l) => s + Number(l.trim().split(/\s+/)[0]), 0) / 1024);
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
  await tavo.stop();
}
