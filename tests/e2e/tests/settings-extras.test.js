// Settings gaps of issue 15 item 5: a connection starts from the provider catalogue (choosing a
// provider fills its protocol and base URL and shows its note), and the web-search APIs are
// managed in the app (add with a write-only key, edit keeping the key, make default, remove).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  tavo = await startTavo();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

test('a new connection starts from the provider catalogue', async () => {
  const sources = await tavo.api('GET', '/api/connection-sources');
  const deepseek = sources.find((/** @type {any} */ s) => s.id === 'deepseek');
  assert.ok(deepseek && deepseek.baseUrl, JSON.stringify(sources.slice(0, 3)));
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  await page.getByRole('button', { name: 'Add connection' }).click();
  const form = page.getByRole('form', { name: 'New connection' });
  const provider = form.getByLabel('Provider');
  await provider.locator('option[value="deepseek"]').waitFor({ state: 'attached' });
  assert.equal(await provider.inputValue(), 'custom');
  await provider.selectOption('deepseek');
  assert.equal(await form.getByLabel('Base URL').inputValue(), deepseek.baseUrl);
  assert.equal(await form.getByLabel('Protocol').inputValue(), deepseek.protocol);
  await provider.selectOption('claude');
  assert.equal(await form.getByLabel('Protocol').inputValue(), 'anthropic');
  await form.getByLabel('Name').fill('claude');
  await form.getByLabel('Model').fill('claude-sonnet-4-5');
  await form.getByLabel('API key').fill('sk-ant-secret-0123456789');
  await form.scrollIntoViewIfNeeded();
  await shot(page, 'settings-connection-catalogue');
  await form.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/anthropic · claude-sonnet-4-5/).waitFor();
  const book = await tavo.api('GET', '/api/connections');
  assert.equal(book.connections[0].source, 'claude');
  assert.equal(book.connections[0].protocol, 'anthropic');
  assert.ok(!(await page.content()).includes('sk-ant-secret-0123456789'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('web-search APIs: add with a key, edit keeping it, a second one as default, remove', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  await page.getByText('No search API yet.').waitFor();
  await page.getByRole('button', { name: 'Add search API' }).click();
  let form = page.getByRole('form', { name: 'New search API' });
  await form.getByLabel('Name').fill('Tavily main');
  await form.getByLabel('Tavily API key').fill('tvly-secret-0123456789');
  await form.getByLabel('Search depth').selectOption('advanced');
  await form.getByRole('button', { name: 'Save' }).click();
  const main = page.getByRole('listitem', { name: 'Search API Tavily main' });
  await main.getByText('default').waitFor();
  assert.match((await main.textContent()) ?? '', /advanced · 3 chunks per source · 5 results · key tvly… \(22 chars\)/);
  assert.ok(!(await page.content()).includes('tvly-secret-0123456789'), 'the key is never shown');

  // Edit without typing a key: the stored key stays.
  await main.getByRole('button', { name: 'Edit Tavily main' }).click();
  form = page.getByRole('form', { name: 'Edit search API' });
  await form.getByLabel('Results').fill('8');
  await form.getByRole('button', { name: 'Save' }).click();
  await main.getByText(/8 results · key tvly… \(22 chars\)/).waitFor();

  // A second one without a key is saved but cannot run; made default, then removed.
  await page.getByRole('button', { name: 'Add search API' }).click();
  form = page.getByRole('form', { name: 'New search API' });
  await form.getByLabel('Name').fill('Draft');
  await form.getByRole('button', { name: 'Save' }).click();
  const draft = page.getByRole('listitem', { name: 'Search API Draft' });
  await draft.getByText('no key').waitFor();
  await draft.getByRole('button', { name: 'Make Draft the default' }).click();
  await draft.getByText('default').waitFor();
  let stored = await tavo.api('GET', '/api/search-apis');
  assert.equal(stored.apis.find((/** @type {any} */ a) => a.id === stored.defaultId).name, 'Draft');
  await shot(page, 'settings-search-apis');
  page.once('dialog', (d) => d.accept());
  await draft.getByRole('button', { name: 'Remove Draft' }).click();
  await draft.waitFor({ state: 'detached' });
  stored = await tavo.api('GET', '/api/search-apis');
  assert.equal(stored.apis.length, 1);
  assert.equal(stored.apis[0].name, 'Tavily main');
  assert.equal(stored.defaultId, stored.apis[0].id);
  assert.equal(stored.apis[0].complete, true);

  // A refusal names the field, in the form.
  await page.getByRole('button', { name: 'Add search API' }).click();
  form = page.getByRole('form', { name: 'New search API' });
  await form.getByLabel('Name').fill('Bad');
  await form.getByLabel('Tavily API key').fill('has a space');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('alert').waitFor();
  assert.match((await form.getByRole('alert').textContent()) ?? '', /apiKey/);
  assert.deepEqual(errors.filter((e) => !/400/.test(e)), []);
  await page.close();
});
