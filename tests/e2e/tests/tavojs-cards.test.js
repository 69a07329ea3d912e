// The front-end card shapes people have (issue 31, item 17), written for this suite: a status
// bar drawn by a regex rule that reads and writes variables, a choice menu whose onclick calls
// triggerSlash('/send …|/trigger'), a multi-page card with inline handlers, a card that links an
// outside font and image (they fail to load; the card still lays out), and a TavernHelper-style
// script reading getChatMessages / getVariables on a 2,000-message chat. Each renders, reacts to
// a click, and leaves the store as expected; the stored text never changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shot, watchErrors } from '../lib/harness.js';
import { bubbleLab, bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';
import { jsonl } from '../lib/benchChat.js';

const lab = bubbleLab();

/** Opens the chat and answers the frame of message `id`. @param {import('playwright-core').Page} page @param {number} id */
async function frameOf(page, id) {
  const article = page.locator(`article.message[data-key="${id}"]`);
  await article.scrollIntoViewIfNeeded();
  const el = article.locator('iframe.bubble-frame');
  await el.waitFor();
  return el.contentFrame();
}

test('a status bar drawn by a regex rule reads and writes variables', async () => {
  const { tavo } = lab;
  const group = await tavo.api('POST', '/api/library/regex', {
    name: 'Status bar',
    entries: [{
      name: 'status', findRegex: '/<status\\/>/g', placements: ['char'], timing: 'display', enabled: true,
      replaceString: '<div class="bar">HP <b id="hp"></b> <button id="hit" onclick="hit()">Take a hit</button></div>'
        + '<script>function paint(){document.getElementById("hp").textContent=tavo.get("hp") ?? 10}'
        + 'function hit(){tavo.set("hp",(tavo.get("hp") ?? 10)-1);paint()}paint()</script>',
    }],
  });
  const { chatId, characters } = await bubbleChat(tavo, ['Fighter'], 'Status bar');
  await tavo.api('POST', `/api/ops/tavo_chat_update?chat=${chatId}`, { chat: { regexes: [group.id] } });
  const text = 'The duel begins. <status/>';
  const id = await addMessage(tavo, chatId, text, characters[0]);
  const page = await lab.browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const frame = await frameOf(page, id);
  await frame.getByText('HP 10').waitFor();
  await frame.getByRole('button', { name: 'Take a hit' }).click();
  await frame.getByRole('button', { name: 'Take a hit' }).click();
  await frame.getByText('HP 8').waitFor();
  await until(async () => (await vars(tavo, chatId)).chat.hp === 8, 10000, 'hp stored');
  await shot(page, 'cards-status-bar');
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.equal(msgs.messages.find((/** @type {any} */ m) => m.id === id).content, text, 'the stored text is the model\'s');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a choice menu sends the choice with triggerSlash and the reply comes', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Guide'], 'Choices');
  const id = await addMessage(tavo, chatId, `<p>Two doors stand before you.</p>
<button onclick="triggerSlash('/send I open the left door|/trigger')">Left door</button>
<button onclick="triggerSlash('/send I open the right door|/trigger')">Right door</button>`, characters[0]);
  const page = await lab.browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const frame = await frameOf(page, id);
  await frame.getByRole('button', { name: 'Left door' }).click();
  await page.locator('article.message', { hasText: 'A reply to the bubble.' }).waitFor({ timeout: 20000 });
  const msgs = (await tavo.api('GET', `/api/chats/${chatId}/messages`)).messages;
  assert.deepEqual(msgs.slice(-2).map((/** @type {any} */ m) => [m.role, m.content]), [['user', 'I open the left door'], ['assistant', 'A reply to the bubble.']]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a multi-page card with inline handlers turns its pages; an outside font and image fail cleanly', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Book'], 'Pages');
  const pages = await addMessage(tavo, chatId, `<div id="p1"><h4>Chapter one</h4><button onclick="show(2)">Next page</button></div>
<div id="p2" style="display:none"><h4>Chapter two</h4><button onclick="show(1)">Previous page</button></div>
<script>function show(n){for(const i of [1,2])document.getElementById('p'+i).style.display=i===n?'':'none';tavo.set('page',n)}</script>`, characters[0]);
  const outside = await addMessage(tavo, chatId, `<link rel="stylesheet" href="https://fonts.example.invalid/css2?family=Ma+Shan+Zheng">
<style>.card{font-family:'Ma Shan Zheng',serif;border:1px solid #888;padding:8px}</style>
<div class="card"><img src="https://images.example.invalid/portrait.png" width="120" height="80" alt="portrait"><p id="name">Lady of the Lake</p>
<button onclick="document.getElementById('name').textContent='Clicked'">Greet</button></div><script>tavo.set('outside', 'ran')</script>`, characters[0]);
  const page = await lab.browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const book = await frameOf(page, pages);
  await book.getByRole('button', { name: 'Next page' }).click();
  await book.getByRole('heading', { name: 'Chapter two' }).waitFor();
  assert.equal(await book.getByRole('heading', { name: 'Chapter one' }).isVisible(), false);
  await book.getByRole('button', { name: 'Previous page' }).click();
  await book.getByRole('heading', { name: 'Chapter one' }).waitFor();
  assert.equal((await vars(tavo, chatId)).chat.page, 1);

  // The image that cannot load leaves its alt text; the card around it lays out and reacts,
  // and the frame is as tall as the card.
  const card = await frameOf(page, outside);
  await card.getByText('Lady of the Lake').waitFor();
  await card.getByRole('button', { name: 'Greet' }).click();
  await card.getByText('Clicked').waitFor();
  const frameHeight = await page.locator(`article.message[data-key="${outside}"] iframe.bubble-frame`).evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(frameHeight >= 60 && frameHeight < 400, `frame ${frameHeight}px`);
  assert.equal((await vars(tavo, chatId)).chat.outside, 'ran');
  await shot(page, 'cards-pages-outside');
  assert.deepEqual(errors.filter((e) => !/example\.invalid|ERR_NAME_NOT_RESOLVED|net::|Failed to load resource/.test(e)), []);
  await page.close();
});

test('a TavernHelper-style script reads 2,000 messages and the variables', async () => {
  const { tavo } = lab;
  const form = new FormData();
  form.append('file', new Blob([jsonl(2000)], { type: 'application/jsonl' }), 'long.jsonl');
  const res = await fetch(`${tavo.url}/api/import`, { method: 'POST', body: form, headers: { 'x-tavo-request': '1' } });
  assert.equal(res.status, 200);
  const chatId = (await res.json()).results[0].chatId;
  await tavo.api('POST', `/api/ops/tavo_variable_set?chat=${chatId}`, { name: 'stats', value: { hp: 7 } });
  const id = await addMessage(tavo, chatId, `<p id="out">reading</p><button id="again" onclick="count()">Count again</button>
<script>
async function count() {
  const last = await getLastMessageId();
  const all = await getChatMessages('0-' + last);
  const users = await getChatMessages('0-' + last, { role: 'user' });
  const vars = getVariables();
  await insertOrAssignVariables({ stats: { mp: 2 }, counted: all.length });
  document.getElementById('out').textContent = 'read ' + all.length;
  tavo.set('helper', { last, all: all.length, users: users.length, first: all[0].message.slice(0, 9), hp: vars.stats && vars.stats.hp });
}
count();
</script>`);
  const page = await lab.browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const h = await until(async () => (await vars(tavo, chatId)).chat.helper ?? null, 60000, 'the helper script');
  assert.deepEqual(h, { last: 2000, all: 2001, users: 1000, first: 'Message 0', hp: 7 });
  const frame = await frameOf(page, id);
  await frame.getByText('read 2001').waitFor();
  await tavo.api('POST', `/api/ops/tavo_message_append?chat=${chatId}`, { message: { content: 'one more' } });
  await frame.getByRole('button', { name: 'Count again' }).click();
  await until(async () => (await vars(tavo, chatId)).chat.helper.all === 2002, 30000, 'the second count');
  const v = (await vars(tavo, chatId)).chat;
  assert.deepEqual(v.stats, { hp: 7, mp: 2 });
  assert.equal(v.counted, 2002);
  assert.deepEqual(errors, []);
  await page.close();
});
