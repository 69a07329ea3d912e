// The character editor (/characters/{id}/edit): every field saved with the revision read and
// seen by `tavo show`; extensions untouched; a two-tab conflict shown side by side and merged
// by field, never overwritten; unsaved edits survive a reload; the last save can be undone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { webFromDisk } from '../lib/webdisk.js';
import { startTavo, launchBrowser, shot, watchErrors, SERAPHINA } from '../lib/harness.js';
import { tavoJson } from '../lib/cli.js';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let id;
const EXTENSIONS = { depth_prompt: { prompt: 'Stay in character.', depth: 4, role: 'system' }, talkativeness: '0.5', custom: { nested: [1, 2, 3] } };

before(async () => {
  tavo = await startTavo();
  id = (await tavo.api('POST', '/api/library/character', {
    name: 'Mira', description: 'Keeps an inn.', firstMes: 'Welcome.', alternateGreetings: ['Back again?'], tags: ['inn'],
    extensions: EXTENSIONS,
  })).id;
  browser = await launchBrowser();
  await webFromDisk(browser.context);
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

test('every card field is edited in the editor and seen by tavo show; extensions stay untouched', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}/edit`);
  const editor = page.getByRole('region', { name: 'Edit Mira' });
  await editor.getByRole('textbox', { name: 'Description' }).fill('{{char}} keeps the inn by the river.');
  await editor.getByRole('textbox', { name: 'Personality' }).fill('Warm, wary.');
  await editor.getByRole('textbox', { name: 'Example dialogue' }).fill('<START>\n{{char}}: Tea?');
  await editor.getByRole('textbox', { name: 'System prompt' }).fill('Write as Mira.');
  await editor.getByRole('textbox', { name: 'Post-history instructions' }).fill('Keep it short.');
  await editor.getByRole('textbox', { name: 'Creator notes' }).fill('For testing.');
  await editor.getByRole('textbox', { name: 'Creator', exact: true }).fill('ann');
  await editor.getByRole('textbox', { name: 'Version' }).fill('1.2');
  await editor.getByRole('textbox', { name: 'Nickname' }).fill('Mi');
  await editor.getByRole('textbox', { name: 'Tags' }).fill('inn, river');
  const greetings = editor.getByRole('group', { name: 'Alternate greetings' });
  await greetings.getByRole('button', { name: 'Add greeting' }).click();
  await greetings.getByRole('textbox', { name: 'Greeting 2' }).fill('The fire is lit.');
  await editor.getByRole('group', { name: 'Group-only greetings' }).getByRole('button', { name: 'Add group greeting' }).click();
  await editor.getByRole('textbox', { name: 'Group greeting 1' }).fill('Welcome, all of you.');
  await editor.getByRole('status').getByText('Unsaved changes').waitFor();
  // Live token counts per field, from the server's tokenizer.
  const want = (await tavo.api('POST', '/api/tokens', { texts: ['{{char}} keeps the inn by the river.'] })).counts[0];
  await page.locator('[data-tokens="description"]').getByText(`${want} tokens`).waitFor();
  await shot(page, 'workbench-character-editor');
  await editor.getByRole('button', { name: 'Save' }).click();
  await editor.getByRole('status').getByText(/^Saved ·/).waitFor();

  const shown = tavoJson(tavo.dataDir, ['show', 'character', String(id), '--json']);
  assert.equal(shown.description, '{{char}} keeps the inn by the river.');
  assert.equal(shown.personality, 'Warm, wary.');
  assert.equal(shown.mesExample, '<START>\n{{char}}: Tea?');
  assert.equal(shown.systemPrompt, 'Write as Mira.');
  assert.equal(shown.postHistoryInstructions, 'Keep it short.');
  assert.equal(shown.creatorNotes, 'For testing.');
  assert.equal(shown.creator, 'ann');
  assert.equal(shown.characterVersion, '1.2');
  assert.equal(shown.nickname, 'Mi');
  assert.deepEqual(shown.tags, ['inn', 'river']);
  assert.deepEqual(shown.alternateGreetings, ['Back again?', 'The fire is lit.']);
  assert.deepEqual(shown.groupOnlyGreetings, ['Welcome, all of you.']);
  assert.equal(shown.firstMes, 'Welcome.', 'untouched fields kept');
  assert.deepEqual(shown.extensions, EXTENSIONS, 'extensions kept untouched');
  assert.deepEqual(errors, []);
  await page.close();
});

test('undo of the last save writes the previous version back', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}/edit`);
  const editor = page.getByRole('region', { name: 'Edit Mira' });
  await editor.getByRole('textbox', { name: 'Scenario' }).fill('A storm.');
  await editor.getByRole('button', { name: 'Save' }).click();
  await editor.getByRole('status').getByText(/^Saved ·/).waitFor();
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).scenario, 'A storm.');
  await editor.getByRole('button', { name: 'Undo', exact: true }).click();
  await page.getByText('Last save undone').waitFor();
  const after = await tavo.api('GET', `/api/library/character/${id}`);
  assert.equal(after.scenario, '', 'back to before the save');
  assert.equal(await editor.getByRole('textbox', { name: 'Scenario' }).inputValue(), '');
  assert.deepEqual(after.extensions, EXTENSIONS);
  assert.deepEqual(errors, []);
  await page.close();
});

test('unsaved edits survive a reload of the tab, and are not on the server', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}/edit`);
  const editor = page.getByRole('region', { name: 'Edit Mira' });
  await editor.getByRole('textbox', { name: 'Scenario' }).fill('Half-written scene');
  // Drafts are written to sessionStorage a moment after the last keystroke: reload once it is.
  await page.waitForFunction((text) => Object.keys(sessionStorage)
    .some((k) => k.startsWith('tavo.draft.character.') && (sessionStorage.getItem(k) || '').includes(text)), 'Half-written scene');
  await page.reload();
  await editor.getByRole('status').getByText('restored after reload').waitFor();
  assert.equal(await editor.getByRole('textbox', { name: 'Scenario' }).inputValue(), 'Half-written scene');
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).scenario, '', 'nothing saved yet');
  const stored = await page.evaluate(() => Object.keys(sessionStorage).join(' '));
  assert.match(stored, /tavo\.draft\.character\./);
  assert.doesNotMatch(stored, /token/i);
  await editor.getByRole('button', { name: 'Discard changes' }).click();
  assert.equal(await editor.getByRole('textbox', { name: 'Scenario' }).inputValue(), '');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a conflict between two tabs is shown side by side and merged by field, never overwritten', async () => {
  const a = await browser.context.newPage();
  const b = await browser.context.newPage();
  const errors = [...watchErrors(a), ...watchErrors(b)];
  await a.goto(`${tavo.url}/characters/${id}/edit`);
  await b.goto(`${tavo.url}/characters/${id}/edit`);
  const ea = a.getByRole('region', { name: 'Edit Mira' });
  const eb = b.getByRole('region', { name: 'Edit Mira' });
  await ea.getByRole('textbox', { name: 'Description' }).waitFor();
  await eb.getByRole('textbox', { name: 'Scenario' }).fill('Theirs: a calm morning.');
  await eb.getByRole('button', { name: 'Save' }).click();
  await eb.getByRole('status').getByText(/^Saved ·/).waitFor();

  await ea.getByRole('textbox', { name: 'Description' }).fill('Mine: Mira, innkeeper.');
  await ea.getByRole('button', { name: 'Save' }).click();
  const conflict = ea.getByRole('alert', { name: 'Conflict' });
  await conflict.getByText('was changed elsewhere').waitFor();
  await conflict.getByText('Nothing was overwritten').waitFor();
  const now = await tavo.api('GET', `/api/library/character/${id}`);
  assert.equal(now.scenario, 'Theirs: a calm morning.', 'not overwritten');
  assert.equal(now.description, '{{char}} keeps the inn by the river.');
  // Both versions side by side, each field starting on the side that changed it.
  await conflict.getByRole('row', { name: /Description/ }).getByText('Mine: Mira, innkeeper.').waitFor();
  await conflict.getByRole('row', { name: /Scenario/ }).getByText('Theirs: a calm morning.').waitFor();
  assert.ok(await conflict.getByRole('radio', { name: 'Mine: Description' }).isChecked());
  assert.ok(await conflict.getByRole('radio', { name: 'Theirs: Scenario' }).isChecked());
  await conflict.scrollIntoViewIfNeeded();
  await shot(a, 'workbench-conflict');
  await conflict.getByRole('button', { name: 'Merge as chosen' }).click();
  await ea.getByRole('status').getByText(/^Saved ·/).waitFor();
  const merged = await tavo.api('GET', `/api/library/character/${id}`);
  assert.equal(merged.description, 'Mine: Mira, innkeeper.');
  assert.equal(merged.scenario, 'Theirs: a calm morning.');
  assert.deepEqual(merged.extensions, EXTENSIONS);

  // Keep theirs drops my edit; keep mine writes it over theirs, knowingly.
  await eb.getByRole('textbox', { name: 'Personality' }).fill('Tab B personality');
  await eb.getByRole('button', { name: 'Save' }).click();
  await eb.getByRole('alert', { name: 'Conflict' }).getByRole('button', { name: 'Keep mine' }).click();
  await eb.getByRole('status').getByText(/^Saved ·/).waitFor();
  const kept = await tavo.api('GET', `/api/library/character/${id}`);
  assert.equal(kept.personality, 'Tab B personality');
  assert.equal(kept.scenario, 'Theirs: a calm morning.');
  assert.equal(kept.description, '{{char}} keeps the inn by the river.', 'keep mine is all of mine, the description tab B had too');
  await ea.getByRole('textbox', { name: 'Personality' }).fill('Tab A personality');
  await ea.getByRole('button', { name: 'Save' }).click();
  await ea.getByRole('alert', { name: 'Conflict' }).getByRole('button', { name: 'Keep theirs' }).click();
  assert.equal(await ea.getByRole('textbox', { name: 'Personality' }).inputValue(), 'Tab B personality');
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).personality, 'Tab B personality');
  assert.deepEqual(errors, []);
  await a.close();
  await b.close();
});

test('an avatar is uploaded cropped to the card shape (2:3) and exported in the PNG card', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}/edit`);
  const avatar = page.getByRole('group', { name: 'Avatar' });
  await avatar.getByLabel('Upload an image').setInputFiles(SERAPHINA);
  await avatar.getByRole('img', { name: 'Cropped avatar' }).waitFor();
  await avatar.getByRole('slider', { name: 'Zoom' }).fill('150');
  await avatar.getByRole('button', { name: 'Use this avatar' }).click();
  await page.getByText('Avatar saved').waitFor();
  const res = await fetch(`${tavo.url}/api/characters/${id}/avatar`);
  assert.equal(res.status, 200);
  const png = Buffer.from(await res.arrayBuffer());
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [400, 600], 'cropped to 2:3');
  const card = Buffer.from(await (await fetch(`${tavo.url}/api/export/character/${id}?format=png`)).arrayBuffer());
  assert.deepEqual([card.readUInt32BE(16), card.readUInt32BE(20)], [400, 600], 'the PNG card is the new image');
  assert.ok(card.includes(Buffer.from('chara')), 'with the card inside');
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).name, 'Mira', 'the card itself unchanged');
  assert.deepEqual(errors, []);
  await page.close();
});
