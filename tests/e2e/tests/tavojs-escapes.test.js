// The sandbox escape suite (issue 17): every hostile bubble of tavojs-escapes.tsv is shown in a
// chat — with scripts on (`rendering.javascript` auto: sandboxed frames) and off (sanitised
// HTML in the page) — and must fail harmlessly: the app keeps its address, title, cookie and
// DOM, opens no window or download, no dialog but the capped browser dialogs a message may
// show, nothing covers it, the store holds no trace of
// an attack, and the app still chats. A new vector is one line of the data file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

const TOKEN = 'escape-suite-token-0123456789';

/** @type {{name: string, kind: string, payload: string}[]} */
export const VECTORS = readFileSync(new URL('./tavojs-escapes.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'))
  .map((l) => {
    const [name, kind, ...rest] = l.split('\t');
    return { name, kind, payload: rest.join('\t') };
  });

/** What makes the app show a bubble in a frame (web/app/bubble/detect.js, SCRIPTED). */
const SCRIPTED = /<script\b|<[a-z][^>]*\son[a-z]+\s*=|javascript:/i;

/** The console line a vector's frame writes once its attack has had its go. @param {string} name */
const ranLine = (name) => `escape vector ran: ${name}`;

/**
 * A vector's bubble text. A bubble that runs in a frame writes `ranLine` to its console once
 * the vector has had its go — a `js` vector when its promise settled, an `html` one when its
 * document has loaded (its inline scripts ran; the listener comes first, so a vector's
 * unclosed tags cannot swallow it): the positive signal the test waits for before it looks
 * for harm. A bubble without scripts gets none, so it stays sanitised HTML in the page.
 * @param {{name: string, kind: string, payload: string}} v @param {number} chat
 */
function bubble(v, chat) {
  const pwn = `(function(){try{(top.__pwned=top.__pwned||[]).push('${v.name}')}catch(e){}try{tavo.set('pwned_${v.name}',1)}catch(e){}})()`;
  const body = v.payload.replaceAll('CHAT', String(chat)).replaceAll('PWN()', pwn);
  const ran = `console.log(${JSON.stringify(ranLine(v.name))})`;
  if (v.kind === 'html') return `<p>vector ${v.name}</p>${SCRIPTED.test(body) ? `<script>addEventListener('load',()=>${ran})</script>` : ''}${body}`;
  return `<p>vector ${v.name}</p><script>(async()=>{let r=null;try{r=await (async()=>{${body}})()}catch(e){r=null}if(r)${pwn};${ran}})()</script>`;
}

/** A fresh session: the token typed into the login screen, as a user would. @param {import('playwright-core').Page} page */
async function login(page) {
  await browser.context.clearCookies();
  await page.goto(`${tavo.url}/`);
  await page.getByLabel('Access token').fill(TOKEN);
  await page.getByRole('button', { name: /Log in/ }).click();
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
}

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'Still here after the escape suite.' }], repeatLast: true });
  tavo = await startTavo({ mock, token: TOKEN });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('the suite has at least 40 vectors, each named once', () => {
  assert.ok(VECTORS.length >= 40, `${VECTORS.length} vectors`);
  assert.equal(new Set(VECTORS.map((v) => v.name)).size, VECTORS.length);
  for (const v of VECTORS) assert.ok(v.kind === 'js' || v.kind === 'html', v.name);
});

for (const mode of /** @type {const} */ (['auto', 'off'])) {
  test(`every vector fails harmlessly with scripts ${mode === 'auto' ? 'on (sandboxed frames)' : 'off (sanitised HTML)'}`, async () => {
    await tavo.api('PUT', '/api/settings/rendering.javascript', { value: mode });
    const { chatId, characters } = await bubbleChat(tavo, [`Stranger ${mode}`, `Friend ${mode}`], `Escapes ${mode}`);
    const first = await addMessage(tavo, chatId, 'The first message, which no vector may delete.', characters[1]);
    /** @type {Map<string, number>} */
    const messageOf = new Map();
    for (const v of VECTORS) messageOf.set(v.name, await addMessage(tavo, chatId, bubble(v, chatId), characters[0]));
    const before = await tavo.api('GET', `/api/chats/${chatId}/messages?limit=500`);
    const charactersBefore = (await tavo.api('GET', '/api/library/character')).map((/** @type {any} */ c) => [c.id, c.name]);

    const pagesBefore = new Set(browser.context.pages());
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    /** The vectors whose frames said they ran (their console reaches the page's). @type {Set<string>} */
    const ran = new Set();
    page.on('console', (m) => {
      const hit = /^escape vector ran: (\S+)$/.exec(m.text());
      if (hit) ran.add(hit[1]);
    });
    /** The browser dialogs the bubbles opened (each dismissed): only the two dialog vectors'. @type {string[]} */
    const dialogs = [];
    let downloads = 0;
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    page.on('download', () => { downloads++; });
    await login(page);
    const cookiesBefore = await browser.context.cookies();
    await page.goto(`${tavo.url}/chats/${chatId}`);
    await page.getByRole('heading', { name: `Escapes ${mode}` }).waitFor();
    const url = page.url();
    const title = await page.title();

    // Answer what the scripts ask the user: Deny, Cancel, Close.
    let answering = true;
    const answer = (async () => {
      // Ends with the page too: a failed assertion closes it without reaching `answering = false`.
      while (answering && !page.isClosed()) {
        const open = page.locator('dialog[open]');
        if (await open.count().catch(() => 0)) {
          const b = open.first().getByRole('button', { name: /^(Deny|Cancel|Close)$/ }).first();
          await b.click({ timeout: 1000 }).catch(() => {});
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    // Bring every bubble near the screen, as a reader scrolling up through the chat would: the
    // list holds the newest page, so keep scrolling at the top (each scroll widens the list
    // or fetches the older page) until the start of the chat shows; then each vector's message
    // in turn, staying on it until its frame (frames are lazy: made only for a bubble that
    // stays near the screen) is made.
    const list = page.locator('.messages');
    await until(async () => {
      await list.evaluate((el) => { el.scrollTop = el.scrollTop > 0 ? 0 : 1; });
      return page.getByText('Start of the chat').isVisible();
    }, 20000, 'the start of the chat');
    /** @type {string[]} */
    const framed = [];
    for (const v of VECTORS) {
      const article = page.locator(`article.message[data-key="${messageOf.get(v.name)}"]`);
      await article.scrollIntoViewIfNeeded();
      if (!(await article.locator('.bubble-script').count())) continue;
      framed.push(v.name);
      await until(async () => {
        await article.scrollIntoViewIfNeeded();
        return (await article.locator('.bubble-script[data-frame-state="waiting"]').count()) === 0;
      }, 15000, `the frame of ${v.name}`);
    }
    if (mode === 'auto') assert.ok(framed.length > 20, `${framed.length} vectors in frames`);
    else assert.deepEqual(framed, [], 'scripts off: no vector in a frame');
    // Every framed vector has had its go: it said so, its frame was stopped (it navigated
    // away, flooded the bridge), or its frame left the card's document (a vector that navigates
    // its own frame lands on the browser's error page: the app refuses to be framed — and
    // its "ran" line may be lost with the document it was written in). Only then is the
    // absence of harm worth looking for.
    const hadItsGo = async (/** @type {string} */ name) => {
      if (ran.has(name)) return true;
      const slot = page.locator(`article.message[data-key="${messageOf.get(name)}"] .bubble-script`);
      if ((await slot.getAttribute('data-frame-state')) === 'stopped') return true;
      const frame = await (await slot.locator('iframe.bubble-frame').elementHandle({ timeout: 1000 }).catch(() => null))?.contentFrame();
      const url = frame ? frame.url() : '';
      return url !== '' && url !== 'about:blank' && !url.endsWith('/app/bubble/frame.html');
    };
    /** @type {string[]} */
    let pending = [];
    await until(async () => {
      pending = [];
      for (const name of framed) if (!(await hadItsGo(name))) pending.push(name);
      return pending.length === 0;
    }, 30000, 'every framed vector to have its go').catch((e) => { throw new Error(`${e.message}: still running ${pending.join(', ')}`); });
    await list.evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await shot(page, `tavojs-escapes-${mode}`);

    // The page is where it was, as it was.
    assert.equal(page.url(), url, 'the app was not navigated');
    assert.equal(await page.title(), title, 'the title is untouched');
    assert.deepEqual(browser.context.pages().filter((p) => !pagesBefore.has(p)).map((p) => p.url()), [page.url()], 'no window was opened');
    // prompt/confirm/alert are the browser's (the seed's demos need a blocking prompt), capped
    // at 5 per message per minute; print() shows nothing. Scripts off: no dialog at all.
    if (mode === 'off') assert.deepEqual(dialogs, [], 'scripts off: no dialog');
    else {
      assert.ok(dialogs.length <= 3 + 5, `${dialogs.length} dialogs: ${dialogs.join(' | ')}`);
      for (const m of dialogs) assert.match(m, /^(x|y|z|spam \d+|really \d+)$/, 'only the dialog vectors asked');
      assert.ok(dialogs.filter((m) => /^(spam|really) /.test(m)).length <= 5, 'the spam stops at 5');
    }
    assert.equal(downloads, 0, 'no download');
    assert.deepEqual(await browser.context.cookies(), cookiesBefore, 'the session cookie is untouched');
    const pageState = await page.evaluate(() => ({
      pwned: /** @type {any} */ (window).__pwned || null,
      polluted: /** @type {any} */ ({}).polluted ?? null,
      topbar: !!document.querySelector('.topbar'),
      composer: !!document.querySelector('.composer textarea'),
      frames: [...document.querySelectorAll('iframe')].map((f) => ({ sandbox: f.getAttribute('sandbox'), h: f.getBoundingClientRect().height, cls: f.className })),
    }));
    assert.equal(pageState.pwned, null, `scripts ran in the app page: ${pageState.pwned}`);
    assert.equal(pageState.polluted, null, 'no prototype pollution in the app');
    assert.ok(pageState.topbar && pageState.composer, 'the app DOM is whole');
    for (const f of pageState.frames) {
      assert.equal(f.cls, 'bubble-frame', 'only bubble frames exist in the app page');
      assert.equal(f.sandbox, 'allow-scripts allow-modals');
      assert.ok(f.h <= 4000, `a frame is ${f.h}px tall`);
    }
    if (mode === 'off') assert.equal(pageState.frames.length, 0, 'scripts off: no frame');
    else assert.ok(pageState.frames.length > 20, `${pageState.frames.length} frames ran`);

    // What scripts asked is answered (each frame asks one question at a time, three at most).
    await until(async () => (await page.locator('dialog[open]').count()) === 0, 15000, 'the questions answered');
    // Nothing covers the app: the composer and the navigation are what the pointer hits (once
    // the last answered question has left the screen).
    const box = /** @type {{x: number, y: number, width: number, height: number}} */ (await page.getByRole('textbox', { name: 'Message' }).boundingBox());
    const composerHit = () => page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('textarea, iframe, .bubble-html-box, dialog')?.tagName || 'none', [box.x + box.width / 2, box.y + box.height / 2]);
    await until(async () => (await composerHit()) !== 'DIALOG', 15000, 'the questions gone from the screen');
    assert.equal(await composerHit(), 'TEXTAREA', 'the composer is not covered');
    const nav = /** @type {{x: number, y: number, width: number, height: number}} */ (await page.getByRole('link', { name: 'Settings' }).boundingBox());
    const navHit = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('a')?.textContent || 'none', [nav.x + nav.width / 2, nav.y + nav.height / 2]);
    assert.equal(navHit, 'Settings', 'the navigation is not covered');

    // The store: no trace of an attack, no message lost, no asset made.
    answering = false;
    await answer;
    const v = await vars(tavo, chatId);
    const traces = [...Object.keys(v.chat), ...Object.keys(v.global)].filter((k) => k.startsWith('pwned'));
    assert.deepEqual(traces, [], 'attack traces in the store');
    const after = await tavo.api('GET', `/api/chats/${chatId}/messages?limit=500`);
    const ids = new Set(after.messages.map((/** @type {any} */ m) => m.id));
    for (const m of before.messages) assert.ok(ids.has(m.id), `message ${m.id} survived`);
    assert.ok(ids.has(first));
    assert.ok(!after.messages.some((/** @type {any} */ m) => m.role === 'system'), 'no forged system message');
    const chat = await tavo.api('GET', `/api/library/chat/${chatId}`);
    assert.equal(chat.name, `Escapes ${mode}`);
    // The seed's marked calls asked, and Deny kept every character as it was.
    assert.deepEqual((await tavo.api('GET', '/api/library/character')).map((/** @type {any} */ c) => [c.id, c.name]), charactersBefore, 'no character deleted or renamed');

    // And the app still chats.
    await page.getByRole('textbox', { name: 'Message' }).fill('Are you still there?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('article.message', { hasText: 'Still here after the escape suite.' }).waitFor({ timeout: 20000 });
    // A friendly bubble in another chat still reaches the store through its bridge.
    if (mode === 'auto') {
      const friend = await bubbleChat(tavo, [`Friend ${mode} 2`], `After ${mode}`);
      await addMessage(tavo, friend.chatId, `<p>alive</p><script>tavo.set('alive', 'yes')</script>`, friend.characters[0]);
      await page.goto(`${tavo.url}/chats/${friend.chatId}`);
      await until(async () => (await vars(tavo, friend.chatId)).chat.alive === 'yes', 15000, 'a friendly bubble');
    }
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    assert.deepEqual(errors.filter((e) => !/Content Security Policy|sandbox|Blocked|blocked|not allowed|Unsafe attempt|permission/i.test(e)), []);
    await page.close();
  });
}

test('a frame that loops forever leaves the app responsive and is stopped from the UI', async () => {
  await tavo.api('PUT', '/api/settings/rendering.javascript', { value: 'auto' });
  const { chatId, characters } = await bubbleChat(tavo, ['Looper'], 'Loop');
  // The bubble tells the store it is about to loop (the bridge's message leaves before the
  // loop starts), then never yields again.
  await addMessage(tavo, chatId, '<p>looping</p><script>setTimeout(() => { tavo.set("looping", "now"); for (;;) {} }, 200)</script>', characters[0]);
  const page = await browser.context.newPage();
  await login(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.locator('iframe.bubble-frame').waitFor();
  await until(async () => (await vars(tavo, chatId)).chat.looping === 'now', 15000, 'the bubble looping');
  const t0 = Date.now();
  await page.getByRole('textbox', { name: 'Message' }).fill('typing while a bubble loops');
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), 'typing while a bubble loops');
  assert.ok(Date.now() - t0 < 3000, 'the app answered');
  await page.getByRole('button', { name: "Stop this message's scripts" }).click();
  await page.getByText(/Scripts stopped: stopped by you/).waitFor();
  assert.equal(await page.locator('iframe.bubble-frame').count(), 0);
  await page.close();
});
