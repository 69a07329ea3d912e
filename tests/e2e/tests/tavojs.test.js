// TavoJS in chat bubbles (seed 002, issue 17) in real Chromium: a bubble script calls the
// namespaces and the test checks what landed in the store through the HTTP API and
// `tavo var get`; destructive calls ask once per card by name; the composer, pickers and
// `reuseContext` work; `rendering.javascript` off / ask / auto and the chat's advanced
// rendering flag decide what runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until, cliVar } from '../lib/bubbles.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'A reply to the bubble.' }], repeatLast: true });
  tavo = await startTavo({ mock, settings: { 'rendering.javascript': 'auto' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** The bubble that walks the API and stores a report (seed 002's examples, one step each). @param {number} charId */
const WALKER = (charId) => `<div id="out">running</div>
<script>
(async () => {
  const R = {};
  const step = async (k, f) => { try { R[k] = await f(); } catch (e) { R[k] = 'ERR ' + e.message; } };
  tavo.set('status', { hp: 100, mp: 32 });
  tavo.update('status', { hp: 70 });
  R.syncGet = tavo.get('status.hp');
  R.v1 = tavo.v1.get('status');
  tavo.set('g', 'global!', 'global');
  tavo.set('m', 5, 'message');
  tavo.set('tmp', { a: 1, b: 2 });
  tavo.unset('tmp.a');
  R.missing = tavo.get('nothing.here');
  await step('unknownScope', async () => tavo.get('x', 'character'));
  await step('self', async () => (await tavo.message.current()).content.includes('id="out"'));
  await step('count', () => tavo.message.count());
  await step('findFirst', async () => (await tavo.message.find(0)).map((m) => m.content));
  await step('findRange', async () => (await tavo.message.find([0, 100])).length);
  await step('findUser', async () => (await tavo.message.find(-1, { role: 'user' })).length);
  await step('getMissing', () => tavo.message.get(999999));
  await step('append', async () => typeof (await tavo.message.append({ content: 'appended by a bubble', characterId: ${charId} })));
  await step('chat', async () => (await tavo.chat.current()).characters.length);
  await step('chatUpdate', async () => (await tavo.chat.update({ name: 'Renamed by a bubble' })).name);
  await step('chars', async () => (await tavo.character.all()).map((c) => c.name));
  await step('charGet', async () => (await tavo.character.get(${charId})).firstMes);
  await step('charGetMissing', () => tavo.character.get(424242));
  await step('charFind', async () => (await tavo.character.find('Al', { match: 'prefix' })).length);
  await step('personaCreate', async () => typeof (await tavo.persona.create({ name: 'Bubble persona', description: 'made by a bubble' })));
  await step('lorebookCreate', async () => typeof (await tavo.lorebook.create({ name: 'Bubble book', entries: [] })));
  await step('lorebookAll', async () => (await tavo.lorebook.all()).map((l) => [l.name, l.entries]));
  await step('memory', async () => (await tavo.memory.update({ enabled: true, memories: ['likes tea'] })).memories);
  await step('memoryCurrent', async () => (await tavo.memory.current()).enabled);
  await step('fileSave', () => tavo.file.save('note.txt', 'hello file'));
  await step('fileLoad', () => tavo.file.load('note.txt'));
  await step('fileExists', () => tavo.file.exists('note.txt'));
  await step('fileMissing', () => tavo.file.load('nope.txt'));
  await step('fileUrl', () => tavo.file.url('logo.png', 'global'));
  await step('fileBadName', () => tavo.file.save('../x', 'x'));
  await step('version', () => tavo.app.version());
  await step('versionNumber', () => tavo.app.versionNumber());
  await step('input', async () => { tavo.input.set('draft from a bubble'); await tavo.input.append('!'); return tavo.input.get(); });
  await step('generate', () => tavo.generate('hi', {}));
  await step('slash', () => triggerSlash('/echo hi'));
  await step('unknown', () => tavo.nothing.here());
  await step('toast', () => tavo.utils.toast('hello from a bubble'));
  tavo.set('report', R);
  document.getElementById('out').textContent = 'walked ' + Object.keys(R).length + ' steps';
})();
</script>`;

test('a bubble script walks the TavoJS API and its calls land in the store every door reads', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Alice', 'Bob']);
  await addMessage(tavo, chatId, 'A **plain** message with <span style="color: rgb(200, 0, 0)">red HTML</span>.', characters[0]);
  const walker = await addMessage(tavo, chatId, WALKER(characters[0]), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  // Plain HTML: sanitised, styled, no frame.
  const plain = page.locator('article.message').first();
  await plain.locator('.bubble-html span', { hasText: 'red HTML' }).waitFor();
  assert.equal(await plain.locator('iframe').count(), 0, 'HTML without scripts needs no frame');
  assert.equal(await plain.locator('.bubble-html span').evaluate((el) => getComputedStyle(el).color), 'rgb(200, 0, 0)');

  const v = await until(async () => {
    const x = await vars(tavo, chatId, walker);
    return x.chat.report ? x : null;
  }, 20000, 'the walker report');
  const R = v.chat.report;
  assert.equal(R.syncGet, 70);
  assert.deepEqual(R.v1, { hp: 70, mp: 32 });
  assert.equal(R.missing, null);
  assert.match(R.unknownScope, /^ERR unknown variable scope/);
  assert.equal(R.self, true);
  assert.equal(R.count, 2);
  assert.equal(R.findFirst.length, 1);
  assert.equal(R.findRange, 2);
  assert.equal(R.findUser, 0);
  assert.equal(R.getMissing, null);
  assert.equal(R.append, 'number');
  assert.equal(R.chat, 2);
  assert.equal(R.chatUpdate, 'Renamed by a bubble');
  assert.deepEqual(R.chars, ['Alice', 'Bob']);
  assert.equal(R.charGet, 'I am Alice.');
  assert.equal(R.charGetMissing, null);
  assert.equal(R.charFind, 1);
  assert.equal(R.personaCreate, 'number');
  assert.equal(R.lorebookCreate, 'number');
  assert.deepEqual(R.lorebookAll, [['Bubble book', 0]]);
  assert.deepEqual(R.memory, ['likes tea']);
  assert.equal(R.memoryCurrent, true);
  assert.equal(R.fileSave, 'files/chat/note.txt');
  assert.equal(R.fileLoad, 'hello file');
  assert.equal(R.fileExists, true);
  assert.equal(R.fileMissing, null);
  assert.equal(R.fileUrl, 'files/global/logo.png');
  assert.match(R.fileBadName, /^ERR /);
  // The Tavo release whose API tavo implements (seed 002: `0.77.0` → 770), so scripts that
  // gate on `versionNumber() >= 780` (the messages API) take their main path.
  assert.equal(R.version, (await tavo.api('GET', '/api/health')).tavoVersion);
  assert.match(R.version, /^\d+\.\d+\.\d+$/);
  assert.ok(R.versionNumber >= 780, `versionNumber ${R.versionNumber}`);
  assert.equal(R.input, 'draft from a bubble!');
  assert.equal(R.generate, 'A reply to the bubble.');
  assert.equal(R.slash, 'hi');
  assert.match(R.unknown, /^ERR /);

  // The same store the CLI and the HTTP API read.
  assert.deepEqual(v.chat.status, { hp: 70, mp: 32 });
  assert.deepEqual(v.chat.tmp, { b: 2 });
  assert.equal(v.global.g, 'global!');
  assert.equal(v.message.m, 5);
  assert.deepEqual(JSON.parse(cliVar(tavo.dataDir, chatId, 'status')), { hp: 70, mp: 32 });
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.equal(msgs.messages.at(-1).content, 'appended by a bubble');
  const chat = await tavo.api('GET', `/api/library/chat/${chatId}`);
  assert.equal(chat.name, 'Renamed by a bubble');
  assert.equal(chat.advancedRendering, true);
  const personas = await tavo.api('GET', '/api/library/persona');
  assert.ok(personas.some((/** @type {any} */ p) => p.name === 'Bubble persona'));
  // The app shows what the bubble did: the appended message, the draft, the new name, the toast.
  await page.locator('article.message', { hasText: 'appended by a bubble' }).waitFor();
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), 'draft from a bubble!');
  await page.getByRole('heading', { name: 'Renamed by a bubble' }).waitFor();
  await page.getByText('hello from a bubble').waitFor();
  const frame = page.frameLocator('iframe.bubble-frame').first();
  await frame.getByText(/walked \d+ steps/).waitFor();
  // The frame is sandboxed to scripts (and the browser's dialogs) only and sized to its content.
  const iframe = page.locator('iframe.bubble-frame').first();
  assert.equal(await iframe.getAttribute('sandbox'), 'allow-scripts allow-modals');
  const h = await iframe.evaluate((el) => el.getBoundingClientRect().height);
  assert.ok(h > 10 && h < 400, `frame height ${h}`);
  await shot(page, 'tavojs-walker');
  // The stored text never changed.
  const stored = msgs.messages.find((/** @type {any} */ m) => m.id === walker);
  assert.equal(stored.content, WALKER(characters[0]));
  assert.deepEqual(errors, []);
  await page.close();
});

test('the calls seed 002 marks ask each time, naming the card; Deny returns null; remember holds; the rest ask only when the policy says so', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Carol', 'Dave'], 'Destructive');
  const victim1 = await addMessage(tavo, chatId, 'delete me first', characters[0]);
  const victim2 = await addMessage(tavo, chatId, 'delete me second', characters[0]);
  const keepMe = await addMessage(tavo, chatId, 'keep me', characters[1]);
  const spare = await tavo.api('POST', '/api/library/character', { name: 'Spare', firstMes: 'Spare parts.' });
  const card = { spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Imported by bubble', first_mes: 'hello', character_book: { entries: [{ keys: ['k'], content: 'lore', enabled: true, insertion_order: 0 }] } } };
  // Carol's script: two message deletes (the seed marks none: no question), then an import (marked).
  const carolMsg = await addMessage(tavo, chatId, `<p id="c">Carol's tools</p><script>
    (async () => {
      const a = await tavo.message.delete(${victim1});
      const b = await tavo.message.delete({ id: ${victim2} });
      tavo.set('carolDeleted', { a, b });
      const imported = await tavo.character.import(${JSON.stringify(card)});
      tavo.set('carol', { a, b, imported });
    })();</script>`, characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const ask = (/** @type {string} */ name) => page.getByRole('dialog', { name: new RegExp(`Allow scripts of “${name}”`) });
  // The deletes ran without a question; the import asks, naming the card and the call.
  await ask('Carol').waitFor();
  assert.deepEqual((await vars(tavo, chatId)).chat.carolDeleted, { a: victim1, b: victim2 });
  assert.match(await ask('Carol').innerText(), /import a character/);
  await shot(page, 'tavojs-confirm');
  await ask('Carol').getByRole('button', { name: 'Allow' }).click();
  const carol = await until(async () => (await vars(tavo, chatId)).chat.carol ?? null, 20000, 'Carol');
  assert.equal(typeof carol.imported.characterId, 'number');
  assert.equal(typeof carol.imported.lorebookId, 'number');
  assert.equal(carol.imported.regexId, null);

  // Dave: a marked delete denied (null, nothing changed), asked again on the next marked call
  // (Deny is not remembered unless ticked), denied with "remember": the third call gets no question.
  // And a message delete, which the policy sets to ask.
  await tavo.api('PUT', '/api/approvals/tavo_message_delete', { approval: 'ask' });
  await addMessage(tavo, chatId, `<p>Dave's tools</p><script>
    (async () => {
      const del = await tavo.character.delete(${spare.id});
      const upd = await tavo.character.update({ id: ${spare.id}, name: 'Renamed by Dave' });
      const third = await tavo.character.update({ id: ${spare.id}, description: 'third try' });
      const msg = await tavo.message.delete(${keepMe});
      tavo.set('dave', { del, upd, third, msg });
    })();</script>`, characters[1]);
  // Carol's script has done its part; it would run again on the reload.
  await tavo.api('POST', `/api/ops/tavo_message_delete?chat=${chatId}&confirm=true`, { id: carolMsg });
  await page.reload();
  await ask('Dave').waitFor();
  assert.match(await ask('Dave').innerText(), /delete a character/);
  await ask('Dave').getByRole('button', { name: 'Deny' }).click();
  await until(async () => /overwrite a character/.test(await ask('Dave').innerText().catch(() => '')), 15000, 'the second question');
  await ask('Dave').getByRole('checkbox', { name: /Remember my answer for “Dave”/ }).check();
  await ask('Dave').getByRole('button', { name: 'Deny' }).click();
  // The message delete asks (policy), and is remembered-denied too: the card's answer holds.
  const v = await until(async () => (await vars(tavo, chatId)).chat.dave ?? null, 20000, 'Dave');
  assert.deepEqual(v, { del: null, upd: null, third: null, msg: null });
  assert.equal(await ask('Dave').count(), 0, 'no third question');
  const spareNow = await tavo.api('GET', `/api/library/character/${spare.id}`);
  assert.equal(spareNow.name, 'Spare', 'Deny changed nothing');
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  const ids = msgs.messages.map((/** @type {any} */ m) => m.id);
  assert.ok(!ids.includes(victim1) && !ids.includes(victim2), 'unmarked deletes ran');
  assert.ok(ids.includes(keepMe), 'the remembered Deny held');
  await tavo.api('DELETE', '/api/approvals');
  assert.deepEqual(errors, []);
  await page.close();
});

test('pickers, the composer and reuseContext: the user answers, the script goes on', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Erin'], 'Interactive');
  await addMessage(tavo, chatId, `<button id="pick">Pick a class</button><p id="got"></p>
<script>
document.getElementById('pick').onclick = async () => {
  const role = await tavo.utils.select([
    { value: 'warrior', label: 'Warrior', description: 'melee', subtitle: 'for beginners' },
    { value: 'mage', label: 'Mage', description: 'spells' },
  ], 'Choose a class', 'mage');
  document.getElementById('got').textContent = 'chose ' + role;
  tavo.set('role', role);
};
</script>`, characters[0]);
  const self = await addMessage(tavo, chatId, `<p id="life">alive</p><script>
(async () => {
  window.runs = (window.runs || 0) + 1;
  const me = await tavo.message.current();
  const mark = '<!-- v' + '2 -->';
  if (!me.content.endsWith(mark)) {
    me.content += mark;
    await tavo.message.update(me, { reuseContext: true });
    tavo.set('afterUpdate', 'still running');
  }
  tavo.input.set('sent by a bubble');
  const r = await tavo.input.send();
  tavo.set('send', r);
})();
</script>`, characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  // input.send is not a call the seed marks: no question.
  const v = await until(async () => {
    const x = await vars(tavo, chatId);
    return x.chat.send ? x : null;
  }, 20000, 'input.send');
  assert.deepEqual(v.chat.send, { ok: true, text: 'sent by a bubble' });
  assert.equal(v.chat.afterUpdate, 'still running');
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.ok(msgs.messages.find((/** @type {any} */ m) => m.id === self).content.endsWith('<!-- v2 -->'));
  assert.ok(msgs.messages.some((/** @type {any} */ m) => m.role === 'user' && m.content === 'sent by a bubble'));
  await page.locator('article.message', { hasText: 'A reply to the bubble.' }).waitFor({ timeout: 20000 });

  const picker = page.frameLocator('iframe.bubble-frame').first();
  await picker.getByRole('button', { name: 'Pick a class' }).click();
  const select = page.getByRole('dialog', { name: 'Choose a class' });
  await select.waitFor();
  await shot(page, 'tavojs-select');
  await select.getByRole('button', { name: /Warrior/ }).click();
  await picker.getByText('chose warrior').waitFor();
  assert.equal((await vars(tavo, chatId)).chat.role, 'warrior');
  assert.deepEqual(errors, []);
  await page.close();
});

test('rendering.javascript off / ask / auto, the auto warning, and the chat flag', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Frank'], 'Modes');
  await addMessage(tavo, chatId, '<b class="x">bold</b><script>tavo.set("ran", (tavo.get("ran") || 0) + 1)</script>', characters[0]);
  await tavo.api('PUT', '/api/settings/rendering.javascript', { value: 'off' });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const msg = page.locator('article.message').first();
  await msg.locator('.bubble-html b', { hasText: 'bold' }).waitFor();
  // Drawn as sanitised HTML, with no frame and no place for one (a frame is made lazily in a
  // .bubble-script slot): nothing can run later either.
  assert.equal(await msg.locator('iframe').count(), 0, 'off: no frame');
  assert.equal(await msg.locator('.bubble-script').count(), 0, 'off: no frame to come');
  assert.equal((await vars(tavo, chatId)).chat.ran, undefined, 'off: nothing ran');

  await tavo.api('PUT', '/api/settings/rendering.javascript', { value: 'ask' });
  await page.reload();
  await msg.getByRole('button', { name: 'Run scripts of Frank' }).click();
  await msg.locator('iframe.bubble-frame').waitFor();
  await until(async () => (await vars(tavo, chatId)).chat.ran === 1, 10000, 'ask: ran once allowed');

  // Turning auto on shows the risk warning; Deny keeps the old mode.
  await page.goto(`${tavo.url}/settings`);
  const select = page.getByLabel('JavaScript in messages (advanced rendering)');
  await select.selectOption('auto');
  const warning = page.getByRole('dialog', { name: 'Run message scripts automatically?' });
  await warning.waitFor();
  await shot(page, 'tavojs-auto-warning');
  await warning.getByRole('button', { name: 'Deny' }).click();
  assert.equal((await tavo.api('GET', '/api/settings')).find((/** @type {any} */ r) => r.key === 'rendering.javascript').value, 'ask');
  await select.selectOption('auto');
  await warning.getByRole('button', { name: 'Allow' }).click();
  await until(async () => (await tavo.api('GET', '/api/settings')).find((/** @type {any} */ r) => r.key === 'rendering.javascript').value === 'auto', 5000, 'auto stored');

  // The chat's advanced rendering off: Markdown only, whatever the JavaScript setting.
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await msg.locator('iframe.bubble-frame').waitFor();
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await page.getByLabel(/Advanced rendering/).click();
  await until(async () => (await tavo.api('GET', `/api/library/chat/${chatId}`)).advancedRendering === false, 5000, 'the flag stored');
  await msg.locator('.content:not(.rich)').waitFor();
  assert.equal(await msg.locator('iframe').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
