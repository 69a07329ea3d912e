// Group chats in the app (Tavo §12): the reply-mode picker and the member list with mute
// switches in Chat settings, a streamed group reply that shows which member is speaking (one
// message per member, "1 of 2"), a muted member skipped by the reply mode, "Reply as" a chosen
// (muted) member from the composer, and a member asked to reply without a new message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let ann;
/** @type {number} */ let bo;
/** @type {number} */ let chat;

const SLOW = { delayMs: 120, chunk: 3 };

before(async () => {
  mock = await startMock({
    turns: [
      { text: 'Ann here: hello to you, traveller, and welcome!', ...SLOW },
      { text: 'Bo here: hi there, nice to see a new face.', ...SLOW },
      { text: 'Ann alone this time.' },
      { text: 'Bo speaks, though muted.' },
      { text: 'Ann speaks unasked.' },
      { text: 'Ann once more, slowly, while you look elsewhere.', ...SLOW },
      { text: 'Bo once more, slowly, as you come back.', ...SLOW },
    ],
    repeatLast: true,
  });
  tavo = await startTavo({ mock });
  ann = (await tavo.api('POST', '/api/library/character', { name: 'Ann', firstMes: 'Ann waves.' })).id;
  bo = (await tavo.api('POST', '/api/library/character', { name: 'Bo', firstMes: 'Bo nods.' })).id;
  chat = (await tavo.api('POST', '/api/chats', { characters: [ann, bo], name: 'The tavern' })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** The assistant messages as stored: [characterId, content]. */
async function answers() {
  const page = await tavo.api('GET', `/api/chats/${chat}/view?limit=50`);
  return page.messages.filter((/** @type {any} */ m) => m.role === 'assistant').map((/** @type {any} */ m) => [m.characterId, m.content]);
}

/** How many requests the mock has answered. */
function requests() {
  return readFileSync(join(mock.dir, 'requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean).length;
}

test('reply mode, mute, a streamed group reply naming each speaker, Reply as, Ask to reply', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const panel = page.getByRole('complementary', { name: 'Chat settings' });
  await panel.getByRole('heading', { name: 'Group members' }).waitFor();

  // Reply mode: natural by default; "Everyone" makes both answer.
  const mode = panel.getByLabel('Reply mode');
  assert.equal(await mode.inputValue(), 'natural');
  await mode.selectOption('all');
  await page.waitForFunction(async (id) => (await fetch(`/api/library/chat/${id}`).then((r) => r.json())).replyMode === 'all', chat);
  await page.waitForFunction(() => /** @type {HTMLSelectElement} */ (document.querySelector('.chat-panel select')).value === 'all');
  await panel.getByText('Every unmuted member answers').waitFor();
  await shot(page, 'group-chat-panel');
  await panel.getByRole('button', { name: 'Close chat settings' }).click();

  // The composer offers "Reply as" in a group chat, defaulting to the reply mode.
  const replyAs = page.getByRole('combobox', { name: 'Reply as' });
  assert.equal(await replyAs.inputValue(), '');
  assert.match((await replyAs.locator('option').first().textContent()) ?? '', /Reply mode: all/);

  // A streamed group reply: Ann's turn, then Bo's, each in its own message, named while it streams.
  const before = (await answers()).length;
  await page.getByRole('textbox', { name: 'Message' }).fill('Hello, both of you!');
  await page.getByRole('button', { name: 'Send' }).click();
  const streaming = page.locator('article.message.streaming');
  await streaming.and(page.getByRole('article', { name: 'Ann' })).getByText('1 of 2').waitFor({ timeout: 15000 });
  await streaming.getByText(/Ann here/).waitFor({ timeout: 15000 });
  await shot(page, 'group-chat-streaming-ann');
  await streaming.and(page.getByRole('article', { name: 'Bo' })).getByText('2 of 2').waitFor({ timeout: 20000 });
  assert.doesNotMatch((await streaming.textContent()) ?? '', /Ann here/, 'Bo’s message streams apart from Ann’s');
  // Ann's finished message is shown from the library while Bo speaks.
  await page.getByRole('article', { name: 'Ann' }).filter({ hasText: 'welcome!' }).waitFor();
  await shot(page, 'group-chat-streaming-bo');
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20000 });
  await page.getByRole('article', { name: 'Bo' }).filter({ hasText: 'new face.' }).waitFor();
  const both = (await answers()).slice(before);
  assert.deepEqual(both.map(([c]) => c), [ann, bo]);
  assert.match(both[0][1], /^Ann here/);
  assert.match(both[1][1], /^Bo here/);

  // Mute Bo: the reply mode skips him.
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await panel.getByRole('button', { name: 'Mute Bo' }).click();
  await panel.getByRole('button', { name: 'Unmute Bo' }).waitFor();
  assert.deepEqual((await tavo.api('GET', `/api/library/chat/${chat}`)).mutedCharacterIds, [bo]);
  await panel.getByRole('button', { name: 'Close chat settings' }).click();
  assert.match((await replyAs.textContent()) ?? '', /Bo \(muted\) answers/);
  let n = (await answers()).length;
  await page.getByRole('textbox', { name: 'Message' }).fill('Anyone there?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('article', { name: 'Ann' }).filter({ hasText: 'Ann alone this time.' }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20000 });
  assert.deepEqual((await answers()).slice(n).map(([c]) => c), [ann], 'a muted member does not answer');

  // Reply as Bo, muted or not: he alone answers; the choice resets after sending.
  n = (await answers()).length;
  await replyAs.selectOption(String(bo));
  await page.getByRole('textbox', { name: 'Message' }).fill('Bo, your turn.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('article', { name: 'Bo' }).filter({ hasText: 'Bo speaks, though muted.' }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20000 });
  assert.deepEqual((await answers()).slice(n).map(([c]) => c), [bo]);
  assert.equal(await replyAs.inputValue(), '', '“Reply as” is for one message');

  // Ask Ann to reply: she answers without a new user message.
  const view = await tavo.api('GET', `/api/chats/${chat}/view?limit=50`);
  const users = view.messages.filter((/** @type {any} */ m) => m.role === 'user').length;
  const asked = requests();
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await panel.getByRole('button', { name: 'Ask Ann to reply' }).click();
  await page.getByRole('article', { name: 'Ann' }).filter({ hasText: 'Ann speaks unasked.' }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20000 });
  const after = await tavo.api('GET', `/api/chats/${chat}/view?limit=50`);
  assert.equal(after.messages.filter((/** @type {any} */ m) => m.role === 'user').length, users, 'no user message was added');
  assert.equal(after.messages.at(-1).characterId, ann);
  assert.equal(requests(), asked + 1);

  // Unmute again.
  await panel.getByRole('button', { name: 'Unmute Bo' }).click();
  await panel.getByRole('button', { name: 'Mute Bo' }).waitFor();
  assert.deepEqual((await tavo.api('GET', `/api/library/chat/${chat}`)).mutedCharacterIds ?? [], []);
  await shot(page, 'group-chat');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a one-character chat shows no group controls', async () => {
  const solo = (await tavo.api('POST', '/api/chats', { characters: [ann], name: 'Just Ann' })).id;
  const page = await browser.context.newPage();
  await page.goto(`${tavo.url}/chats/${solo}`);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  assert.equal(await page.getByRole('combobox', { name: 'Reply as' }).count(), 0);
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await page.getByRole('heading', { name: 'Character' }).waitFor();
  assert.equal(await page.getByLabel('Reply mode').count(), 0);
  assert.equal(await page.getByRole('button', { name: 'Mute Ann' }).count(), 0);
  await page.close();
});

test('a new group chat from the chats screen: members in the order ticked, its reply mode, every greeting', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats`);
  await page.getByRole('button', { name: 'New group chat' }).click();
  const form = page.getByRole('form', { name: 'New group chat' });
  const create = form.getByRole('button', { name: 'Create group chat' });
  await form.getByLabel('Bo').check();
  assert.equal(await create.isDisabled(), true, 'one member is not a group');
  await form.getByLabel('Ann').check();
  await form.getByLabel('Name').fill('Designated tavern');
  await form.getByLabel('Reply mode').selectOption('designated');
  await form.getByText('Only the members you address as @name answer.').waitFor();
  await shot(page, 'group-chat-new');
  await create.click();
  await page.waitForURL(/\/chats\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const stored = await tavo.api('GET', `/api/library/chat/${id}`);
  assert.equal(stored.name, 'Designated tavern');
  assert.equal(stored.replyMode, 'designated');
  assert.deepEqual(stored.characters.map((/** @type {any} */ c) => c.id), [bo, ann]);
  await page.getByRole('article', { name: 'Bo' }).getByText('Bo nods.').waitFor();
  await page.getByRole('article', { name: 'Ann' }).getByText('Ann waves.').waitFor();
  assert.match((await page.getByRole('combobox', { name: 'Reply as' }).textContent()) ?? '', /Reply mode: designated/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('phone width: the group chat, its panel and the MCP settings fit 360 px', async () => {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 360, height: 740 });
  /** @param {string} name */
  const fits = async (name) => {
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 360, `${name} is ${width} px wide at a 360 px viewport`);
    await shot(page, 'phone-' + name);
  };
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.getByRole('combobox', { name: 'Reply as' }).waitFor();
  await fits('group-chat');
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await page.getByRole('button', { name: 'Mute Bo' }).waitFor();
  await fits('group-chat-panel');
  await page.goto(`${tavo.url}/settings`);
  await page.getByRole('button', { name: 'Add MCP server' }).click();
  await page.getByRole('form', { name: 'New MCP server' }).scrollIntoViewIfNeeded();
  await fits('settings-mcp');
  await page.close();
});

test('leaving a group reply mid-stream and coming back: each member once, in its own message', async () => {
  const other = (await tavo.api('POST', '/api/chats', { characters: [ann], name: 'Elsewhere' })).id;
  assert.equal((await tavo.api('GET', `/api/library/chat/${chat}`)).replyMode, 'all');
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chat}`);
  const n = (await answers()).length;
  await page.getByRole('textbox', { name: 'Message' }).fill('Once more, both.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('article.message.streaming').getByText(/Ann once/).waitFor({ timeout: 15000 });
  await page.goto(`${tavo.url}/chats/${other}`);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  // Come back once the turn has passed to Bo while the page was elsewhere.
  await until(async () => (await answers()).slice(n).some(([c]) => c === bo), 20000, "Bo's turn begun in the server");
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.getByRole('article', { name: 'Bo' }).filter({ hasText: 'as you come back.' }).waitFor({ timeout: 30000 });
  // A page loaded mid-reply shows Send until it has found the live reply, and the last delta
  // arrives before the turn's final save: the reply is over when no message is streaming.
  await page.locator('article.message.streaming').waitFor({ state: 'detached', timeout: 30000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  const text = (await page.locator('.messages').textContent()) ?? '';
  assert.equal(text.split('Ann once more, slowly').length - 1, 1, 'Ann’s answer shown once');
  assert.equal(text.split('Bo once more, slowly').length - 1, 1, 'Bo’s answer shown once');
  const got = (await answers()).slice(n);
  assert.deepEqual(got.map(([c]) => c), [ann, bo]);
  assert.equal(got[0][1], 'Ann once more, slowly, while you look elsewhere.');
  assert.equal(got[1][1], 'Bo once more, slowly, as you come back.');
  assert.deepEqual(errors, []);
  await page.close();
});
