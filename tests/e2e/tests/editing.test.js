// Editing a character's main fields and a persona: the write carries the revision the form
// read; when the asset changed meanwhile (409) the form says so in words and overwrites
// nothing until the user chooses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTavo, launchBrowser, shot, watchErrors, SERAPHINA } from '../lib/harness.js';
import { webFromDisk } from '../lib/webdisk.js';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let id;

before(async () => {
  tavo = await startTavo();
  id = (await tavo.api('POST', '/api/library/character', { name: 'Mira', description: 'Keeps an inn.', firstMes: 'Welcome.' })).id;
  await tavo.api('POST', '/api/library/persona', { name: 'Ann', description: 'A traveller.', active: true });
  browser = await launchBrowser();
  await webFromDisk(browser.context);
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

test("edit a character's main fields; they are stored and shown", async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}`);
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  const form = page.getByRole('form', { name: 'Edit Mira' });
  await form.getByLabel('Description').fill('{{char}} keeps the inn by the river.');
  await form.getByLabel('Alternate greetings').fill('Back again?\n---\nThe fire is lit.');
  await shot(page, 'character-edit');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  await page.getByText('Mira keeps the inn by the river.').waitFor();
  const stored = await tavo.api('GET', `/api/library/character/${id}`);
  assert.equal(stored.description, '{{char}} keeps the inn by the river.');
  assert.deepEqual(stored.alternateGreetings, ['Back again?', 'The fire is lit.']);
  assert.equal(stored.firstMes, 'Welcome.', 'fields not in the form are kept');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a conflict is shown in words and overwrites nothing until the user chooses', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/characters/${id}`);
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  const form = page.getByRole('form', { name: 'Edit Mira' });
  await form.getByLabel('Scenario').fill('Mine: a stormy night.');
  // Someone else writes the card meanwhile (another tab, the CLI, the model).
  const theirs = await tavo.api('GET', `/api/library/character/${id}`);
  await tavo.api('PUT', `/api/library/character/${id}`, { ...theirs, scenario: 'Theirs: a calm morning.' });

  await form.getByRole('button', { name: 'Save' }).click();
  const alert = form.getByRole('alert');
  await alert.getByText('was changed elsewhere').waitFor();
  await alert.getByText('nothing was overwritten').waitFor();
  await alert.scrollIntoViewIfNeeded();
  await shot(page, 'character-conflict');
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).scenario, 'Theirs: a calm morning.', 'not overwritten');
  assert.equal(await form.getByLabel('Scenario').inputValue(), 'Mine: a stormy night.', 'the user keeps their text');
  assert.ok(await form.getByRole('button', { name: 'Save' }).isDisabled(), 'Save waits for a choice');

  // Choosing to keep mine saves over theirs, knowingly.
  await alert.getByRole('button', { name: 'Keep my edits' }).click();
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  assert.equal((await tavo.api('GET', `/api/library/character/${id}`)).scenario, 'Mine: a stormy night.');

  // Loading theirs drops the user's text.
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  await form.getByLabel('Scenario').fill('Mine again.');
  const again = await tavo.api('GET', `/api/library/character/${id}`);
  await tavo.api('PUT', `/api/library/character/${id}`, { ...again, scenario: 'Theirs again.' });
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('alert').getByRole('button', { name: 'Load the newer version' }).click();
  assert.equal(await form.getByLabel('Scenario').inputValue(), 'Theirs again.');
  assert.deepEqual(errors, []);
  await page.close();
});

test('edit a persona from the library', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/`);
  await page.getByRole('button', { name: 'Edit Ann' }).click();
  const form = page.getByRole('form', { name: 'Edit persona Ann' });
  await form.getByLabel('Name').fill('Anna');
  await form.getByLabel('Description').fill('A traveller from the north.');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('status').getByText(/^Saved/).waitFor();
  await page.getByRole('region', { name: 'Personas' }).getByRole('listitem').getByText('Anna').waitFor();
  const list = await tavo.api('GET', '/api/library/persona');
  const anna = await tavo.api('GET', `/api/library/persona/${list[0].id}`);
  assert.equal(anna.name, 'Anna');
  assert.equal(anna.description, 'A traveller from the north.');
  assert.equal(anna.active, true, 'still the default');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a persona edited elsewhere meanwhile: both versions side by side, merged by field; unsaved edits survive a reload', async () => {
  const [first] = await tavo.api('GET', '/api/library/persona');
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/`);
  await page.getByRole('button', { name: `Edit ${first.name}` }).click();
  // The form's name follows the stored name, which changes below.
  const form = page.getByRole('form', { name: /^Edit persona / });
  await form.getByLabel('Description').fill('Mine: a traveller with a map.');
  // An unsaved edit is still there after a reload (once the tab has kept it: drafts are
  // written to sessionStorage a moment after the last keystroke).
  await page.waitForFunction((text) => Object.keys(sessionStorage)
    .some((k) => k.startsWith('tavo.draft.persona.') && (sessionStorage.getItem(k) || '').includes(text)), 'Mine: a traveller with a map.');
  await page.reload();
  await page.getByRole('button', { name: `Edit ${first.name}` }).click();
  assert.equal(await form.getByLabel('Description').inputValue(), 'Mine: a traveller with a map.');
  await form.getByRole('status').getByText(/restored after reload/).waitFor();
  // Another door renames the persona meanwhile.
  const theirs = await tavo.api('GET', `/api/library/persona/${first.id}`);
  await tavo.api('PUT', `/api/library/persona/${first.id}`, { ...theirs, name: 'Anya' });
  await form.getByRole('button', { name: 'Save' }).click();
  const conflict = form.getByRole('alert', { name: 'Conflict' });
  await conflict.getByText('Nothing was overwritten').waitFor();
  assert.equal((await tavo.api('GET', `/api/library/persona/${first.id}`)).description, theirs.description, 'not overwritten');
  assert.ok(await conflict.getByRole('radio', { name: 'Mine: Description' }).isChecked());
  assert.ok(await conflict.getByRole('radio', { name: 'Theirs: Name' }).isChecked());
  await conflict.getByRole('button', { name: 'Merge as chosen' }).click();
  await form.getByRole('status').getByText(/^Saved ·/).waitFor();
  const merged = await tavo.api('GET', `/api/library/persona/${first.id}`);
  assert.equal(merged.name, 'Anya');
  assert.equal(merged.description, 'Mine: a traveller with a map.');
  // The last save can be undone.
  await form.getByRole('button', { name: 'Undo' }).click();
  await page.getByText('Last save undone').waitFor();
  assert.equal((await tavo.api('GET', `/api/library/persona/${first.id}`)).description, theirs.description);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a persona's avatar is uploaded cropped (2:3) and shown beside the user's messages", async () => {
  const [persona] = await tavo.api('GET', '/api/library/persona');
  const chat = (await tavo.api('POST', '/api/chats', { characters: [id], name: 'Avatar chat', persona: persona.id })).id;
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/`);
  await page.getByRole('button', { name: `Edit ${persona.name}` }).click();
  const avatar = page.getByRole('group', { name: 'Avatar' });
  await avatar.getByLabel('Upload an image').setInputFiles(SERAPHINA);
  await avatar.getByRole('img', { name: 'Cropped avatar' }).waitFor();
  await avatar.getByRole('button', { name: 'Use this avatar' }).click();
  await page.getByText('Avatar saved').waitFor();
  const res = await fetch(`${tavo.url}/api/personas/${persona.id}/avatar`);
  assert.equal(res.status, 200);
  const png = Buffer.from(await res.arrayBuffer());
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [400, 600], 'cropped to 2:3');
  // The persona list shows it.
  await page.getByRole('region', { name: 'Personas' }).locator(`img.avatar[src^="/api/personas/${persona.id}/avatar"]`).waitFor();
  await shot(page, 'persona-avatar');
  // Not an image: refused in words, nothing stored.
  const bad = await fetch(`${tavo.url}/api/personas/${persona.id}/avatar`, { method: 'PUT', headers: { 'x-tavo-request': '1' }, body: 'not an image' });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error.message, /not a PNG, JPEG, WebP or GIF/);
  assert.equal((await fetch(`${tavo.url}/api/personas/999/avatar`, { method: 'PUT', headers: { 'x-tavo-request': '1' }, body: png })).status, 404);
  // The user's messages in a chat with this persona carry it.
  await tavo.api('POST', `/api/ops/tavo_message_append?chat=${chat}`, { message: { role: 'user', content: 'Hello from me.' } });
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.locator('article.message.user').first().locator(`img.avatar[src="/api/personas/${persona.id}/avatar"]`).waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('Make default: one write, and the library keeps one default persona', async () => {
  const bo = (await tavo.api('POST', '/api/library/persona', { name: 'Bo', description: 'A sailor.' })).id;
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const writes = [];
  page.on('request', (r) => {
    if (r.method() === 'PUT' && r.url().includes('/api/library/persona/')) writes.push(r.url());
  });
  await page.goto(`${tavo.url}/`);
  const personas = page.getByRole('region', { name: 'Personas' });
  const row = personas.getByRole('listitem').filter({ hasText: 'Bo' });
  await row.getByRole('button', { name: 'Make default' }).click();
  await row.getByText('default', { exact: true }).waitFor();
  assert.equal(writes.length, 1, 'the page writes only the new default');
  const defaults = [];
  for (const p of await tavo.api('GET', '/api/library/persona')) {
    if ((await tavo.api('GET', `/api/library/persona/${p.id}`)).active) defaults.push(p.id);
  }
  assert.deepEqual(defaults, [bo], 'the others stopped being the default');
  assert.equal(await personas.getByRole('button', { name: 'Make default' }).count(), 1);
  assert.deepEqual(errors, []);
  await page.close();
});
