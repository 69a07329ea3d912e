// Seed 002 rows that were partly true (issue 31, items 9, 11–15), each through a bubble in real
// Chromium: `tavo.events`, the chat's JavaScript console, dates as `Date` objects, the stable
// `tavo.file.url` path (also for a file saved after the frame started, and as a reference
// image), `file.save` up to 40 MiB, and a script that runs once per view of the chat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shot } from '../lib/harness.js';
import { bubbleLab, bubbleChat, addMessage, bubbleReport, reportingBubble, vars, until } from '../lib/bubbles.js';

const lab = bubbleLab();

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('tavo.events: message and chat notifications reach a bubble; plugin hooks are refused', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Herald'], 'Events');
  await addMessage(tavo, chatId, reportingBubble('events', `
  R.types = [...tavo.events.TYPES];
  try { tavo.events.on('generation:prepare', () => {}); R.hook = 'registered'; } catch (e) { R.hook = e.message; }
  const seen = [];
  const got = new Promise((resolve) => {
    const off = tavo.events.on('message:added', (e) => { seen.push({ type: e.type, change: e.change, role: e.message.role, chat: e.chatId === tavo_chat }); });
    tavo.events.on('message:changed', (e) => { if (e.change === 'added') { off(); resolve(); } });
  });
  const renamed = new Promise((resolve) => tavo.events.once('chat:updated', (e) => resolve(e.chat.name)));
  const tavo_chat = (await tavo.chat.current()).id;
  await tavo.message.append({ content: 'a new message' });
  await got;
  await tavo.chat.update({ name: 'Events, renamed' });
  R.renamed = await renamed;
  R.seen = seen;
  `), characters[0]);
  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'events');
  assert.deepEqual(R.types, ['chat:updated', 'message:added', 'message:updated', 'message:deleted', 'message:changed']);
  assert.match(R.hook, /generation:prepare can be registered only .*plugin's entry|plugin hook/);
  assert.deepEqual(R.seen, [{ type: 'message:added', change: 'added', role: 'assistant', chat: true }]);
  assert.equal(R.renamed, 'Events, renamed');
  assert.deepEqual(errors, []);
  await page.close();
});

test('console output of a chat\'s scripts reaches its JavaScript console, with the message it came from', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Logger'], 'Console');
  await addMessage(tavo, chatId, 'A plain first message.', characters[0]);
  const id = await addMessage(tavo, chatId, `<p>logging</p><script>
  console.log('hello from a bubble', { hp: 3 });
  console.warn('careful now');
  console.error(new Error('something broke'));
  tavo.set('logged', true);
  setTimeout(() => { throw new Error('uncaught in a timer'); });
  </script>`, characters[0]);
  const { page, errors } = await bubbleReport(lab, chatId, 'logged');
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const lines = page.getByRole('list', { name: 'Console lines' });
  await until(async () => (await lines.locator('li').count()) >= 4, 10000, 'four console lines');
  const text = await lines.innerText();
  assert.match(text, /log\s+#1\s+hello from a bubble \{"hp":3\}/);
  assert.match(text, /warn\s+#1\s+careful now/);
  assert.match(text, /error\s+#1\s+Error: something broke/);
  assert.match(text, /error\s+#1\s+.*uncaught in a timer/);
  await shot(page, 'tavojs-console');
  // The floor button brings the message into view.
  await lines.getByRole('button', { name: '#1' }).first().click();
  await page.locator(`article.message[data-key="${id}"]`).waitFor({ state: 'visible' });
  await page.getByRole('button', { name: 'Clear the console' }).click();
  await page.getByText('Nothing logged.').waitFor();
  assert.deepEqual(errors.filter((e) => !/something broke|uncaught in a timer/.test(e)), []);
  await page.close();
});

test('creationDate and modificationDate arrive as Date objects', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Dated'], 'Dates');
  await addMessage(tavo, chatId, reportingBubble('dates', `
  const me = await tavo.character.get(${characters[0]});
  const all = await tavo.character.all();
  R.isDate = me.creationDate instanceof Date && me.modificationDate instanceof Date;
  R.valid = !Number.isNaN(me.creationDate.getTime());
  R.listDates = all.every((c) => !('creationDate' in c) || c.creationDate instanceof Date);
  R.year = me.creationDate.getUTCFullYear();
  `), characters[0]);
  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'dates');
  assert.deepEqual(R, { isDate: true, valid: true, listDates: true, year: new Date().getUTCFullYear() });
  assert.deepEqual(errors, []);
  await page.close();
});

test('tavo.file.url is the stable path: it shows a file saved later, survives in a variable, and file.save takes 20 MiB but not 41', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Keeper'], 'Stable paths');
  await addMessage(tavo, chatId, reportingBubble('paths', `
  R.url = tavo.file.url('later.png');
  R.global = tavo.file.url('g.png', 'global');
  tavo.set('bg', R.url);
  // Saved after this frame started (by the API, as the model or another bubble would).
  await new Promise((r) => { const t = setInterval(async () => { if (await tavo.file.exists('later.png')) { clearInterval(t); r(); } }, 200); });
  const img = new Image();
  img.src = tavo.file.url('later.png');
  document.body.appendChild(img);
  // The relative path fails first (the frame has no URL for it yet); the signed URL the app
  // sends is swapped in and loads.
  for (let i = 0; i < 100 && !img.naturalWidth; i++) await new Promise((r) => setTimeout(r, 100));
  R.width = img.naturalWidth;
  R.stillPath = tavo.file.url('later.png');
  const big = 'y'.repeat(20 * 1024 * 1024);
  R.bigSaved = await tavo.file.save('big.txt', big);
  R.bigBack = (await tavo.file.load('big.txt')).length;
  try { await tavo.file.save('huge.txt', 'z'.repeat(41 * 1024 * 1024)); R.huge = 'saved'; } catch (e) { R.huge = e.code; }
  R.hugeThere = await tavo.file.exists('huge.txt');
  `), characters[0]);
  const page = await lab.browser.context.newPage();
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await new Promise((r) => setTimeout(r, 1500));
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'later.png', content: `data:image/png;base64,${PNG}`, options: { encoding: 'dataUrl' } });
  const R = await until(async () => (await vars(tavo, chatId)).chat.paths ?? null, 60000, 'the paths report');
  assert.equal(R.url, 'files/chat/later.png');
  assert.equal(R.global, 'files/global/g.png');
  assert.equal(R.stillPath, 'files/chat/later.png');
  assert.equal(R.width, 1, 'a file saved after the frame started is shown by its path');
  assert.equal((await vars(tavo, chatId)).chat.bg, 'files/chat/later.png');
  assert.equal(R.bigSaved, 'files/chat/big.txt');
  assert.equal(R.bigBack, 20 * 1024 * 1024);
  assert.equal(R.huge, 'limit_exceeded');
  assert.equal(R.hugeThere, false);
  await page.close();
});

test('a bubble\'s script runs once per view: scrolled far away and back, it does not run again', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Once'], 'Once per view');
  const id = await addMessage(tavo, chatId, `<p id="runs">counting</p><script>
  tavo.set('runs', (tavo.get('runs') || 0) + 1);
  document.getElementById('runs').textContent = 'ran';
  </script>`, characters[0]);
  for (let i = 0; i < 160; i++) await addMessage(tavo, chatId, `Filler message ${i}.`, characters[0]);
  const page = await lab.browser.context.newPage();
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const list = page.locator('.messages');
  const article = page.locator(`article.message[data-key="${id}"]`);
  // Up to the start of the chat, where the bubble is; it runs once.
  await until(async () => {
    await list.evaluate((el) => { el.scrollTop = el.scrollTop > 0 ? 0 : 1; });
    return page.getByText('Start of the chat').isVisible();
  }, 30000, 'the start of the chat');
  await article.scrollIntoViewIfNeeded();
  await until(async () => (await vars(tavo, chatId)).chat.runs === 1, 15000, 'the first run');
  // Down to the end: the message leaves the list's window (the DOM keeps about 90 messages).
  await until(async () => {
    await list.evaluate((el) => { el.scrollTop = el.scrollHeight; });
    return page.getByText('Filler message 159.').isVisible();
  }, 30000, 'the end of the chat');
  await until(async () => (await page.locator('article.message[data-parked]').count()) === 1, 10000, 'the bubble parked off the window');
  // And back up to it.
  await until(async () => {
    await list.evaluate((el) => { el.scrollTop = el.scrollTop > 0 ? 0 : 1; });
    return page.getByText('Start of the chat').isVisible();
  }, 30000, 'the start again');
  await article.scrollIntoViewIfNeeded();
  await page.frameLocator(`article.message[data-key="${id}"] iframe.bubble-frame`).getByText('ran').waitFor();
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await vars(tavo, chatId)).chat.runs, 1, 'the script ran once');
  await page.close();
});
