// The preset prompt manager, the prompt inspector, the regex editor's live tester and the
// themes screen, each against the engine: reordering preset entries changes what
// `tavo prompt` builds; the inspector's messages and token parts are `tavo prompt --explain
// --json`'s; the tester's result is the display copy the engine makes of the same text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { webFromDisk } from '../lib/webdisk.js';
import { startTavo, launchBrowser, shot, watchErrors, SHARED } from '../lib/harness.js';
import { tavoJson } from '../lib/cli.js';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let mira;
/** @type {number} */ let preset;
/** @type {number} */ let book;
/** @type {number} */ let chat;

before(async () => {
  tavo = await startTavo();
  mira = (await tavo.api('POST', '/api/library/character', { name: 'Mira', description: 'Mira keeps the inn.', firstMes: 'Welcome.' })).id;
  preset = (await tavo.api('POST', '/api/library/preset', {
    name: 'Small',
    entries: [
      { identifier: 'main', name: 'Main prompt', type: 'builtin', content: 'MAIN PROMPT', enabled: true },
      { identifier: 'alpha', name: 'Alpha', type: 'custom', content: 'ALPHA-TEXT', enabled: true },
      { identifier: 'beta', name: 'Beta', type: 'custom', content: 'BETA-TEXT', enabled: true },
      { identifier: 'chatHistory', name: 'Chat History', type: 'marker', enabled: true },
    ],
  })).id;
  book = (await tavo.api('POST', '/api/library/lorebook', {
    name: 'World',
    entries: [
      { identifier: 'always', name: 'Always', content: 'The inn stands by a river.', strategy: 'constant', enabled: true },
      { identifier: 'dragon', name: 'Dragon', content: 'A dragon sleeps under the hill.', keywords: ['dragon'], enabled: true },
      { identifier: 'off', name: 'Switched off', content: 'Never shown.', strategy: 'constant', enabled: false },
      { identifier: 'griffin', name: 'Griffin', content: 'Griffins nest in the cliffs.', keywords: ['griffin'], enabled: true },
    ],
  })).id;
  chat = (await tavo.api('POST', '/api/chats', { characters: [mira], preset, lorebooks: [book] })).id;
  await tavo.api('POST', `/api/ops/tavo_message_append?chat=${chat}`, { message: { role: 'user', content: 'Tell me about the dragon.' } });
  browser = await launchBrowser();
  await webFromDisk(browser.context);
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

/** Index of the first prompt message containing `text`. @param {{content: string}[]} messages @param {string} text */
const where = (messages, text) => messages.findIndex((m) => m.content.includes(text));

test('reordering preset entries by drag and by keyboard changes the prompt', async () => {
  const before = tavoJson(tavo.dataDir, ['prompt', '--chat', String(chat), '--json']);
  assert.ok(where(before, 'ALPHA-TEXT') < where(before, 'BETA-TEXT'), 'alpha first at the start');
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/presets/${preset}`);
  const list = page.getByRole('list', { name: 'Prompt entries' });
  await list.getByRole('listitem', { name: 'Beta' }).dragTo(list.getByRole('listitem', { name: 'Alpha' }));
  const names = async () => list.getByRole('listitem').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
  let order = await names();
  assert.ok(order.indexOf('Beta') < order.indexOf('Alpha'), `dragged: ${order.join(', ')}`);
  // Markers are shown as markers.
  await list.getByRole('listitem', { name: 'Chat History' }).getByText('marker').waitFor();
  // Keyboard: Main moves down one place with Alt+↓ and keeps the focus.
  await list.getByRole('listitem', { name: 'Main prompt' }).focus();
  await page.keyboard.press('Alt+ArrowDown');
  order = await names();
  assert.equal(order.indexOf('Main prompt'), 1, `keyboard: ${order.join(', ')}`);
  // Edit an entry's content, role and position.
  await list.getByRole('listitem', { name: 'Alpha' }).getByRole('button', { name: 'Alpha', exact: true }).click();
  const form = page.getByRole('form', { name: 'Entry Alpha' });
  await form.getByRole('textbox', { name: 'Content' }).fill('ALPHA-TEXT, edited');
  await form.getByRole('combobox', { name: 'Role' }).selectOption('user');
  await shot(page, 'workbench-preset');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').getByText(/^Saved ·/).waitFor();

  const afterPrompt = tavoJson(tavo.dataDir, ['prompt', '--chat', String(chat), '--json']);
  assert.ok(where(afterPrompt, 'BETA-TEXT') < where(afterPrompt, 'ALPHA-TEXT, edited'), 'beta now before alpha in the prompt');
  assert.ok(where(afterPrompt, 'BETA-TEXT') < where(afterPrompt, 'MAIN PROMPT'), 'main moved after beta');
  assert.equal(afterPrompt[where(afterPrompt, 'ALPHA-TEXT, edited')].role, 'user');
  assert.deepEqual(errors, []);
  await page.close();
});

test('search within the large corpus preset (289 entries)', async () => {
  const form = new FormData();
  const file = join(SHARED, 'corpus/presets/nemo-engine-latest.json');
  form.append('file', new Blob([readFileSync(file)]), 'nemo-engine-latest.json');
  const res = await fetch(tavo.url + '/api/import', { method: 'POST', body: form, headers: { 'x-tavo-request': '1' } });
  const answer = await res.json();
  const big = answer.results[0].presetId;
  const stored = await tavo.api('GET', `/api/library/preset/${big}`);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/presets/${big}`);
  const active = stored.entries.filter((/** @type {any} */ e) => e.active !== false).length;
  await page.getByRole('status').getByText(`${active} of ${stored.entries.length} entries`).waitFor();
  const term = 'chatHistory';
  const expected = stored.entries.filter((/** @type {any} */ e) => e.active !== false
    && [e.name, e.identifier, e.content].some((x) => (x || '').toLowerCase().includes(term.toLowerCase()))).length;
  await page.getByRole('searchbox', { name: 'Search' }).fill(term);
  await page.getByRole('status').getByText(`${expected} of ${stored.entries.length} entries`).waitFor();
  assert.equal(await page.getByRole('list', { name: 'Prompt entries' }).getByRole('listitem').count(), expected);
  // SillyTavern's markers (chat history, examples, card fields) are shown as markers.
  const markers = stored.entries.filter((/** @type {any} */ e) => e.type === 'marker' && e.active !== false).length;
  await page.getByRole('searchbox', { name: 'Search' }).fill('');
  assert.equal(await page.locator('.prompt-entry.marker').count(), markers);
  assert.ok(markers >= 8, `markers: ${markers}`);
  await page.getByRole('searchbox', { name: 'Search' }).fill(term);
  await page.getByRole('list', { name: 'Prompt entries' }).getByRole('listitem', { name: 'Chat History' }).getByText('marker').waitFor();
  await shot(page, 'workbench-preset-search');
  assert.deepEqual(errors, []);
  await page.close();
});

test("the prompt inspector's parts add up to tavo prompt --explain --json", async () => {
  const cli = tavoJson(tavo.dataDir, ['prompt', '--chat', String(chat), '--explain', '--json']);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chat}/prompt`);
  const messages = page.getByRole('region', { name: 'Messages' }).getByRole('listitem');
  await messages.first().waitFor();
  const shown = await messages.evaluateAll((els) => els.map((e) => ({ role: e.querySelector('.pill')?.textContent, content: e.querySelector('pre')?.textContent })));
  assert.deepEqual(shown, cli.messages, 'the exact messages of tavo prompt');
  const parts = await page.getByRole('region', { name: 'Token parts' }).locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => ({ part: r.getAttribute('data-part'), tokens: Number(r.querySelector('td')?.textContent) })));
  assert.deepEqual(parts, cli.tokens.parts.map((/** @type {any} */ p) => ({ part: p.part, tokens: p.tokens })));
  // The parts plus the reply's priming are the prompt's total.
  const sum = cli.tokens.parts.reduce((/** @type {number} */ a, /** @type {any} */ p) => a + p.tokens, 0);
  const priming = Number(await page.locator('tr[data-part="(priming)"] td').first().textContent());
  assert.ok(priming >= 0 && priming <= 3, `priming ${priming}`);
  assert.equal(sum + priming, cli.tokens.total);
  assert.equal(Number(await page.getByTestId('parts-sum').textContent()), cli.tokens.total);
  const lore = page.getByRole('region', { name: 'Lorebook' });
  await lore.getByText(`${cli.activatedEntries.length} activated, ${cli.skippedEntries.length} skipped`).waitFor();
  await lore.getByRole('listitem').filter({ hasText: 'Dragon' }).getByText('key “dragon” in message depth 0').waitFor();
  await lore.getByRole('listitem').filter({ hasText: 'Switched off' }).getByText('disabled').waitFor();
  assert.equal(await lore.getByText('Griffin').count(), 0, 'an entry whose key did not occur is not a gate');
  // Each message says where it came from, in step with tavo prompt's messageSources.
  const from = await page.getByTestId('message-sources').evaluateAll((els) => els.map((e) => e.querySelectorAll('.source').length));
  assert.deepEqual(from, cli.messageSources.map((/** @type {string[]} */ s) => s.length));
  const history = cli.messageSources.findIndex((/** @type {string[]} */ s) => s.includes('chatHistory'));
  assert.ok(history >= 0, 'a history message');
  assert.match(String(await page.getByTestId('message-sources').nth(history).textContent()), /chat history/);
  const main = cli.messageSources.findIndex((/** @type {string[]} */ s) => s.includes('main'));
  assert.equal(await page.getByTestId('message-sources').nth(main).getByRole('link', { name: 'preset entry main' }).getAttribute('href'), `/presets/${preset}`);
  await shot(page, 'workbench-inspector');
  // Clicking a part opens its editor: a card field the character editor, an entry its book.
  assert.equal(await page.getByRole('region', { name: 'Token parts' }).getByRole('link', { name: 'charDescription' }).getAttribute('href'), `/characters/${mira}/edit`);
  assert.equal(await page.getByRole('region', { name: 'Token parts' }).getByRole('link', { name: 'alpha' }).getAttribute('href'), `/presets/${preset}`);
  await lore.getByRole('link', { name: 'Dragon' }).click();
  await page.waitForURL(`${tavo.url}/lorebooks/${book}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a regex tested live gives what the engine gives on the same text', async () => {
  const rule = {
    name: 'mail', findRegex: '/(?<user>\\w+)@(\\w+)/g', replaceString: '[$2 for $<user>, {{char}}]', trimStrings: ['x'],
    placements: ['char'], timing: 'display', enabled: true,
  };
  const group = (await tavo.api('POST', '/api/library/regex', { name: 'Mail', entries: [rule] })).id;
  const sample = 'write to ax@b or é c@dx, then stop';
  // The engine: the display copy of an AI message with this text in a chat bound to the group.
  const rchat = (await tavo.api('POST', '/api/chats', { characters: [mira], regexes: [group] })).id;
  await tavo.api('POST', `/api/ops/tavo_message_append?chat=${rchat}`, { message: { role: 'assistant', content: sample, characterId: mira } });
  const view = await tavo.api('GET', `/api/chats/${rchat}/view`);
  const engine = view.messages[view.messages.length - 1].display.content;
  assert.notEqual(engine, sample, 'the rule does something');

  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/regex/${group}`);
  const tester = page.getByRole('region', { name: 'Tester' });
  await tester.getByRole('textbox', { name: '{{char}} is' }).fill('Mira');
  await tester.getByRole('textbox', { name: 'Sample text' }).fill(sample);
  await tester.getByRole('list', { name: 'Matches' }).getByRole('listitem').nth(1).waitFor();
  await page.waitForFunction((want) => /** @type {HTMLTextAreaElement|null} */ (document.querySelector('textarea[aria-label="Result"]'))?.value === want, engine, { timeout: 5000 });
  assert.equal(await tester.getByRole('textbox', { name: 'Result' }).inputValue(), engine);
  const matches = await tester.getByRole('list', { name: 'Matches' }).getByRole('listitem').allTextContents();
  assert.equal(matches.length, 2);
  assert.equal(matches[1], `c@dx at ${sample.indexOf('c@dx')} → [d for c, Mira]`, 'UTF-16 offset, trim applied to captures');
  // A stored message as the sample: its text, placement and depth, the same result.
  await tester.getByRole('textbox', { name: 'Sample text' }).fill('');
  await tester.getByRole('combobox', { name: 'Sample from chat' }).selectOption(String(rchat));
  const stored = view.messages[view.messages.length - 1];
  await tester.getByRole('combobox', { name: 'Sample message' }).selectOption(String(stored.id));
  assert.equal(await tester.getByRole('textbox', { name: 'Sample text' }).inputValue(), sample);
  assert.equal(await tester.getByRole('spinbutton', { name: 'Sample depth' }).inputValue(), '0');
  await page.waitForFunction((want) => /** @type {HTMLTextAreaElement|null} */ (document.querySelector('textarea[aria-label="Result"]'))?.value === want, engine, { timeout: 5000 });
  // Editing the rule re-runs it: a bare pattern replaces the first match only.
  await page.getByRole('textbox', { name: 'Find' }).fill('(\\w+)@(\\w+)');
  await page.waitForFunction(() => /** @type {HTMLTextAreaElement|null} */ (document.querySelector('textarea[aria-label="Result"]'))?.value.includes('c@dx'));
  // Outside its placements the rule does nothing, and says why.
  await tester.getByRole('combobox', { name: 'Sample placement' }).selectOption('user');
  await tester.getByText('Not applied: the rule does not apply to user text').waitFor();
  await shot(page, 'workbench-regex');
  // Saved with the revision read.
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').getByText(/^Saved ·/).waitFor();
  assert.equal((await tavo.api('GET', `/api/library/regex/${group}`)).entries[0].findRegex, '(\\w+)@(\\w+)');
  assert.deepEqual(errors, []);
  await page.close();
});

test('themes: duplicate an official theme, edit, apply (it styles the app), export and import', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/themes`);
  await page.getByRole('list', { name: 'Themes' }).getByRole('button', { name: 'Default Dark', exact: true }).click();
  const form = page.getByRole('form', { name: 'Theme Default Dark' });
  await form.getByText('Official themes are read-only').waitFor();
  await form.getByRole('button', { name: 'Duplicate' }).click();
  const copy = page.getByRole('form', { name: 'Theme Default Dark (copy)' });
  await copy.getByRole('textbox', { name: 'Background colour' }).fill('#204060');
  await copy.getByRole('textbox', { name: 'Background colour' }).press('Tab');
  await copy.getByRole('textbox', { name: 'Character bubble colour' }).fill('#FF336699');
  await copy.getByRole('textbox', { name: 'Character bubble colour' }).press('Tab');
  await copy.getByRole('combobox', { name: 'Avatar shape' }).selectOption('square');
  await copy.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).first().waitFor();
  await copy.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('list', { name: 'Themes' }).getByText('current').waitFor();
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.waitForFunction(() => getComputedStyle(document.body).backgroundColor === 'rgb(32, 64, 96)');
  await shot(page, 'workbench-themes');
  // The theme styles the app everywhere, across a reload.
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.waitForFunction(() => getComputedStyle(document.body).backgroundColor === 'rgb(32, 64, 96)');
  const bubble = await page.locator('article.message.assistant .bubble').first().evaluate((e) => getComputedStyle(e).backgroundColor);
  assert.equal(bubble, 'rgb(51, 102, 153)', '#AARRGGBB read as the theme notation');
  await shot(page, 'workbench-themed-chat');
  assert.equal(await bg(), 'rgb(32, 64, 96)');

  // Export, then import the file back as another theme.
  await page.goto(`${tavo.url}/themes`);
  await page.getByRole('list', { name: 'Themes' }).getByRole('button', { name: 'Default Dark (copy)' }).click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
  const doc = JSON.parse(readFileSync(/** @type {string} */ (await download.path()), 'utf8'));
  assert.equal(doc.format, 'tavo-theme');
  assert.equal(doc.theme.background.color, '#204060');
  doc.theme.name = 'Imported night';
  await page.getByLabel('Import theme').setInputFiles({ name: 'night.thm', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(doc)) });
  await page.getByRole('form', { name: 'Theme Imported night' }).waitFor();
  const all = await tavo.api('POST', '/api/ops/tavo_theme_all', {});
  assert.ok(JSON.stringify(all).includes('Imported night'));
  await page.getByRole('button', { name: "Use the app's own look" }).click();
  await page.waitForFunction(() => getComputedStyle(document.body).backgroundColor !== 'rgb(32, 64, 96)');
  assert.deepEqual(errors, []);
  await page.close();
});
