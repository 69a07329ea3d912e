// What a chat shows and is bound to: macros and `display` regex rules change the shown copy
// only (the stored text keeps them), and the side panel binds persona, regex groups and
// members (a group chat), and clones the chat.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

const REPLY = 'I am fine, {{user}}. <status>hp 10, calm</status> The fire is warm.';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let mira;
/** @type {number} */ let chatId;

before(async () => {
  mock = await startMock({ turns: [{ text: REPLY, delayMs: 20, chunk: 5 }, { text: 'Another <status>hp 9</status> line.', delayMs: 20, chunk: 4 }], repeatLast: true });
  tavo = await startTavo({ mock });
  await tavo.api('POST', '/api/library/persona', { name: 'Ann', description: 'A traveller.', active: true });
  await tavo.api('POST', '/api/library/persona', { name: 'Bob', description: 'A smith.' });
  mira = (await tavo.api('POST', '/api/library/character', {
    name: 'Mira', description: '{{char}} keeps the forest inn where {{user}} stays.', firstMes: 'Welcome, {{user}}. I am {{char}}.',
  })).id;
  await tavo.api('POST', '/api/library/character', { name: 'Tobin', firstMes: 'Hm.' });
  await tavo.api('POST', '/api/library/regex', {
    name: 'Status box',
    entries: [{
      name: 'status', findRegex: '/<status>([\\s\\S]*?)<\\/status>/g', replaceString: '**[{{char}}: $1]**',
      placements: ['char'], timing: 'display', enabled: true,
    }],
  });
  chatId = (await tavo.api('POST', '/api/chats', { characters: [mira] })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('card text and messages are shown with macros expanded; the stored text keeps them', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${mira}`);
  await page.getByText('Mira keeps the forest inn where Ann stays.').waitFor();
  await page.getByText('Welcome, Ann. I am Mira.').first().waitFor();
  assert.equal(await page.getByText('{{char}}').count(), 0, 'no raw macro on the card page');

  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByText('Welcome, Ann. I am Mira.').waitFor();
  await page.getByRole('textbox', { name: 'Message' }).fill('How are you?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 15000 });
  const last = page.locator('article.message.assistant').last();
  await last.getByText('I am fine, Ann.').waitFor();
  // No display rule is bound yet: the <status> tag's text shows as written.
  await last.getByText('hp 10, calm').waitFor();
  assert.equal(await last.getByText('[Mira: hp 10, calm]').count(), 0);
  const stored = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.equal(stored.messages.at(-1).content, REPLY, 'the stored reply keeps the macro and the tag');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the side panel binds a display regex group: the shown copy changes, the stored one does not', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const panel = page.getByRole('complementary', { name: 'Chat settings' });
  await panel.getByRole('checkbox', { name: 'Status box' }).click();
  const last = page.locator('article.message.assistant').last();
  await last.locator('strong', { hasText: '[Mira: hp 10, calm]' }).waitFor();
  const chat = await tavo.api('GET', `/api/library/chat/${chatId}`);
  assert.deepEqual(chat.regexes.map((/** @type {any} */ r) => r.name), ['Status box']);
  await shot(page, 'chat-panel');

  // The editor shows the stored text, tag and all.
  await last.getByRole('button', { name: 'Edit' }).click();
  assert.equal(await last.getByRole('textbox', { name: 'Edit message' }).inputValue(), REPLY);
  await last.getByRole('button', { name: 'Cancel' }).click();

  // A reply streamed with the rule bound is shown through it.
  await panel.getByRole('button', { name: 'Close chat settings' }).click();
  await page.getByRole('textbox', { name: 'Message' }).fill('And now?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 15000 });
  await page.locator('article.message.assistant').last().locator('strong', { hasText: '[Mira: hp 9]' }).waitFor();
  const stored = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.match(stored.messages.at(-1).content, /<status>hp 9<\/status>/);

  // Unbinding shows the text as stored again.
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await panel.getByRole('checkbox', { name: 'Status box' }).click();
  await page.locator('article.message.assistant').last().locator('strong').waitFor({ state: 'detached' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the side panel picks the persona, makes a group chat, and clones the chat', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const panel = page.getByRole('complementary', { name: 'Chat settings' });
  await panel.getByLabel('Persona').selectOption({ label: 'Bob' });
  await page.locator('.chat-head .members').getByText('as Bob').waitFor();
  // The greeting's shown copy follows the chat's persona only where it was not already
  // expanded at creation; the reply's {{user}} is expanded at display time.
  await page.locator('article.message.assistant').nth(1).getByText('I am fine, Bob.').waitFor();

  await panel.getByLabel('Add a member').selectOption({ label: 'Tobin' });
  await panel.getByRole('button', { name: 'Add', exact: true }).click();
  await panel.getByRole('heading', { name: 'Group members' }).waitFor();
  await page.locator('.chat-head .members').getByRole('link', { name: 'Tobin' }).waitFor();
  const chat = await tavo.api('GET', `/api/library/chat/${chatId}`);
  assert.deepEqual(chat.characters.map((/** @type {any} */ c) => c.name), ['Mira', 'Tobin']);
  assert.equal(chat.persona.name, 'Bob');
  await shot(page, 'chat-panel-group');

  const before = (await tavo.api('GET', `/api/chats/${chatId}/messages`)).total;
  await panel.getByRole('button', { name: 'Clone chat' }).click();
  await page.waitForURL((u) => /\/chats\/\d+$/.test(u.pathname) && !u.pathname.endsWith('/' + chatId));
  const copy = Number(new URL(page.url()).pathname.split('/').pop());
  const copied = await tavo.api('GET', `/api/chats/${copy}/messages`);
  assert.equal(copied.total, before, 'the copy has every message');
  await page.locator('.chat-head h1', { hasText: '(copy)' }).waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
