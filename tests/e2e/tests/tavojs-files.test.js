// tavo.file.url on a token-protected server, in real Chromium (issue 17: "tavo.file.url works on
// a token-protected server, since the frame carries no credentials"): the frame's images load
// through short-lived URLs the server signed — a file stored before the page opened, one the
// script saves, and a relative `files/chat/…` path written into the page — while the unsigned
// path and a tampered signature are refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

const TOKEN = 'signed-files-token-0123456789';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'ok' }], repeatLast: true });
  tavo = await startTavo({ mock, token: TOKEN, settings: { 'rendering.javascript': 'auto' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('images of stored files load in a sandboxed frame through signed URLs; unsigned and tampered ones are refused', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Kai'], 'Files');
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'pre.png', content: `data:image/png;base64,${PNG}`, options: { encoding: 'dataUrl' } });
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'logo.png', content: `data:image/png;base64,${PNG}`, options: { scope: 'global', encoding: 'dataUrl' } });
  await addMessage(tavo, chatId, `<img id="static" src="files/chat/pre.png" alt="static"><div id="c"></div><p id="p">files</p>
<script>
(async () => {
  const R = {};
  const loaded = (img) => new Promise((r) => { if (img.complete && img.naturalWidth) return r(); img.onload = img.onerror = () => r(); setTimeout(r, 5000); });
  // An <img> given a path first fails on the relative address, then loads once the runtime
  // has swapped its signed URL in: wait for the picture, not the first load event.
  const shown = async (img) => { for (let i = 0; i < 100 && !img.naturalWidth; i++) await new Promise((r) => setTimeout(r, 50)); };
  R.pre = tavo.file.url('pre.png');
  const p = new Image(); p.src = R.pre; document.body.appendChild(p); await shown(p);
  R.preSigned = p.getAttribute('src');
  R.logo = tavo.file.url('logo.png', 'global');
  R.unknown = tavo.file.url('nothing.png');
  R.path = await tavo.file.save('dot.png', 'data:image/png;base64,${PNG}');
  R.saved = tavo.file.url('dot.png');
  R.remote = await tavo.file.save('remote.svg', '${tavo.url}/favicon.svg');
  R.remoteText = await tavo.file.load('remote.svg');
  const a = new Image(); a.src = R.saved; document.body.appendChild(a); await shown(a); R.savedWidth = a.naturalWidth; R.savedSigned = a.getAttribute('src');
  const g = new Image(); g.src = R.logo; document.body.appendChild(g); await shown(g); R.logoWidth = g.naturalWidth; R.logoSigned = g.getAttribute('src');
  // The seed's own example: the save's relative path written into the page.
  document.getElementById('c').innerHTML = '<img id="rel" src="' + R.path + '">';
  // The runtime points the new img at its signed URL (a mutation observer): wait for that, or
  // give up after 5 s and let relSigned say so.
  const rel = document.getElementById('rel');
  for (const end = Date.now() + 5000; !rel.getAttribute('src').includes('/api/signed/') && Date.now() < end;) await new Promise((r) => setTimeout(r, 10));
  await loaded(rel);
  R.relWidth = rel.naturalWidth;
  R.relSigned = rel.getAttribute('src').includes('/api/signed/');
  const s = document.getElementById('static'); await loaded(s); R.staticWidth = s.naturalWidth;
  tavo.set('files', R);
  document.getElementById('p').textContent = 'files done';
})();
</script>`, characters[0]);

  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await browser.context.clearCookies();
  await page.goto(`${tavo.url}/`);
  await page.getByLabel('Access token').fill(TOKEN);
  await page.getByRole('button', { name: /Log in/ }).click();
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const v = await until(async () => {
    const x = await vars(tavo, chatId);
    return x.chat.files ? x : null;
  }, 30000, 'the files probe');
  const R = v.chat.files;
  const signed = new RegExp(`^${tavo.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/api/signed/chats/${chatId}/files/`);
  // tavo.file.url is the stable path (seed 002); what an <img> shows is its signed URL.
  assert.equal(R.pre, 'files/chat/pre.png');
  assert.equal(R.logo, 'files/global/logo.png');
  assert.match(R.preSigned, signed, 'a file stored before the page opened');
  assert.match(R.logoSigned, signed);
  assert.match(R.logoSigned, /\/files\/global\/logo\.png\?e=\d+&s=[0-9a-f]{64}$/);
  assert.equal(R.unknown, 'files/chat/nothing.png', 'an unknown name keeps the seed\'s relative path');
  assert.equal(R.path, 'files/chat/dot.png');
  assert.equal(R.saved, 'files/chat/dot.png');
  assert.match(R.savedSigned, signed, 'signed before the save resolved');
  assert.equal(R.remote, 'files/chat/remote.svg', 'an http(s) URL is downloaded into storage');
  assert.match(R.remoteText, /<svg/);
  assert.equal(R.savedWidth, 1);
  assert.equal(R.logoWidth, 1);
  assert.equal(R.relWidth, 1, 'a relative files/… src is pointed at its signed URL');
  assert.equal(R.relSigned, true);
  assert.equal(R.staticWidth, 1);
  const frame = page.frameLocator('iframe.bubble-frame').first();
  await frame.getByText('files done').waitFor();
  await shot(page, 'tavojs-signed-files');

  // Without the signature the same file needs the token; a changed signature or name is refused.
  const bare = await fetch(`${tavo.url}/api/chats/${chatId}/files/chat/pre.png`);
  assert.equal(bare.status, 401);
  const ok = await fetch(R.preSigned);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('content-type'), 'image/png');
  for (const bad of [R.preSigned.replace(/s=[0-9a-f]{8}/, 's=00000000'), R.preSigned.replace('pre.png', 'dot.png'), R.preSigned.replace(/e=(\d+)/, (_m, e) => `e=${Number(e) + 1}`)]) {
    const r = await fetch(bad);
    assert.equal(r.status, 403, bad);
    assert.equal((await r.json()).error.code, 'signature_invalid');
  }
  assert.deepEqual(errors, []);
  await page.close();
});
