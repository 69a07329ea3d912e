// The daily path: import a PNG card by the file input, open its page, start a chat, send a
// message and watch the reply stream; then swipe, edit, and switch chats during a reply.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until, SERAPHINA } from '../lib/harness.js';

const REPLY = 'The forest is quiet tonight. I keep watch by the fire, so rest now.';
const SWIPE = 'A second answer, from another swipe.';
const SLOW = 'One slow sentence streamed in many small pieces, so the user can leave and come back.';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({
    turns: [
      { reasoning: 'The user greets me; answer warmly.', text: REPLY, delayMs: 25, chunk: 6 },
      { text: SWIPE, delayMs: 10 },
      { text: SLOW, delayMs: 60, chunk: 3 },
      { text: 'ok' },
    ],
    repeatLast: true,
  });
  tavo = await startTavo({ mock });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('import a PNG card, open a chat, send a message and see the streamed reply', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(tavo.url + '/');
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  await shot(page, 'library-empty');

  await page.getByLabel('Import', { exact: true }).setInputFiles(SERAPHINA);
  const results = page.getByRole('region', { name: 'Import results' });
  await results.getByText('st-default_Seraphina.png').waitFor();
  await page.getByRole('link', { name: 'Seraphina' }).first().waitFor();
  await shot(page, 'library-imported');

  await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).click();
  await page.waitForURL(/\/characters\/\d+$/);
  await page.getByRole('heading', { name: 'Seraphina', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Greetings' }).waitFor();
  await shot(page, 'character');

  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForURL(/\/chats\/\d+$/);
  // The greeting is message 0.
  await page.locator('article.message.assistant').first().waitFor();
  const greeting = await page.locator('article.message.assistant .content').first().innerText();
  assert.ok(greeting.length > 20, 'the greeting is shown');

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Hello, who are you?');
  await page.getByRole('button', { name: 'Send' }).click();
  // While it streams, Stop replaces Send.
  await page.getByRole('button', { name: 'Stop' }).waitFor();
  await page.locator('article.message.streaming').waitFor();
  await shot(page, 'chat-streaming');
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 15000 });
  const last = page.locator('article.message.assistant').last();
  await assert.doesNotReject(last.getByText(REPLY).waitFor());
  // Reasoning is kept, collapsed.
  const reasoning = last.locator('details.reasoning');
  assert.equal(await reasoning.getAttribute('open'), null);
  await reasoning.locator('summary').click();
  await last.getByText('The user greets me').waitFor();
  const user = page.locator('article.message.user').last();
  await user.getByText('Hello, who are you?').waitFor();
  await shot(page, 'chat');

  // The address is the chat's: a reload shows the same messages.
  await page.reload();
  await page.locator('article.message.assistant').last().getByText(REPLY).waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('swipe to a new answer and back, then edit a message', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const chats = await tavo.api('GET', '/api/chats');
  await page.goto(`${tavo.url}/chats/${chats[0].id}`);
  const last = page.locator('article.message.assistant').last();
  await last.getByText(REPLY).waitFor();

  await last.getByRole('button', { name: 'Next swipe' }).click();
  await page.locator('article.message.assistant').last().getByText(SWIPE).waitFor({ timeout: 15000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  const swiped = page.locator('article.message.assistant').last();
  await swiped.locator('.swipe-index', { hasText: '2/2' }).waitFor();

  await swiped.getByRole('button', { name: 'Previous swipe' }).click();
  await page.locator('article.message.assistant').last().getByText(REPLY).waitFor();
  await page.locator('article.message.assistant').last().locator('.swipe-index', { hasText: '1/2' }).waitFor();
  await shot(page, 'chat-swipes');

  const mine = page.locator('article.message.user').last();
  await mine.hover();
  await mine.getByRole('button', { name: 'Edit' }).click();
  await mine.getByRole('textbox', { name: 'Edit message' }).fill('Hello again, edited.');
  await mine.getByRole('button', { name: 'Save' }).click();
  await page.locator('article.message.user').last().getByText('Hello again, edited.').waitFor();
  const stored = await tavo.api('GET', `/api/chats/${chats[0].id}/messages`);
  assert.ok(stored.messages.some((/** @type {any} */ m) => m.content === 'Hello again, edited.'), 'the edit is stored');
  assert.deepEqual(errors, []);
  await page.close();
});

test('switching chats during a reply and coming back shows every token once', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const chats = await tavo.api('GET', '/api/chats');
  const id = chats[0].id;
  await page.goto(`${tavo.url}/chats/${id}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Tell me something slowly.');
  await page.getByRole('button', { name: 'Send' }).click();
  const streaming = page.locator('article.message.streaming .content');
  await streaming.waitFor();
  const shownBeforeLeaving = (await streaming.innerText()).trim();
  // Leave while it streams: the reply goes on in the server. Come back once the server has
  // saved more of it than the page had shown, so the page must catch up on tokens it missed.
  await page.getByRole('link', { name: 'Characters' }).click();
  await page.getByRole('heading', { name: 'Characters' }).waitFor();
  await until(async () => {
    const last = (await tavo.api('GET', `/api/chats/${id}/messages`)).messages.at(-1);
    return last.role === 'assistant' && last.content.length > shownBeforeLeaving.length;
  }, 15000, 'the reply streamed on while the page was away');
  await page.goBack();
  await page.waitForURL(new RegExp(`/chats/${id}$`));
  // Back in the chat, the reply is still live: Stop, then Send once it has finished.
  await page.getByRole('button', { name: 'Stop' }).waitFor();
  await page.locator('article.message.streaming').waitFor({ state: 'detached', timeout: 20000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  const text = await page.locator('article.message.assistant').last().locator('.content').innerText();
  assert.equal(text.trim(), SLOW);
  assert.deepEqual(errors, []);
  await page.close();
});

test('hide a message, then delete the chat from its menu', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const chats = await tavo.api('GET', '/api/chats');
  const id = chats[0].id;
  await page.goto(`${tavo.url}/chats/${id}`);
  const first = page.locator('article.message').first();
  await first.getByRole('button', { name: 'Hide' }).click();
  await page.locator('article.message').first().getByRole('button', { name: 'Unhide' }).waitFor();
  const stored = await tavo.api('GET', `/api/chats/${id}/messages`);
  assert.equal(stored.messages[0].hidden, true);
  page.once('dialog', (d) => d.accept());
  await page.getByText('Chat', { exact: true }).click();
  await page.getByRole('button', { name: 'Delete chat' }).click();
  await page.waitForURL(/\/characters\/\d+$/);
  const left = await tavo.api('GET', '/api/chats');
  assert.ok(!left.some((/** @type {any} */ c) => c.id === id), 'the chat is gone');
  assert.deepEqual(errors, []);
  await page.close();
});
