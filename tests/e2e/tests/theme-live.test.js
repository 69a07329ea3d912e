// The current theme is a library setting (issue 30 item 14; seed 000: "更新或重新绑定当前主题时，
// WebView 会实时更新配置，不刷新页面"): setting `theme.current` from another door restyles the open
// page at once, a model's tavo_theme_update of the current theme inside a reply restyles it too,
// going back to 0 gives the app's own look, and a model's `apply: true` rebinds the current
// theme — no reload anywhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatId;
/** @type {number} */ let themeId;
/** @type {number} */ let dawnId;

before(async () => {
  tavo = await startTavo({ settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  const made = await tavo.api('POST', '/api/ops/tavo_theme_create', { theme: { name: 'Live night', background: { color: '#FF204060' } } });
  themeId = made.result.id;
  const dawn = await tavo.api('POST', '/api/ops/tavo_theme_create', { theme: { name: 'Dawn', background: { color: '#FF604020' } } });
  dawnId = dawn.result.id;
  // The model's turns name the theme, so the mock starts once it exists.
  mock = await startMock({
    turns: [
      { toolCalls: [{ name: 'tavo_theme_update', arguments: { theme: { id: themeId, background: { color: '#FF102030' } } } }] },
      { text: 'Repainted.' },
      { toolCalls: [{ name: 'tavo_theme_update', arguments: { theme: { id: dawnId }, apply: true } }] },
      { text: 'Switched to dawn.' },
    ],
  });
  await tavo.api('POST', '/api/connections', { name: 'mock', source: 'custom', protocol: 'openai-chat', baseUrl: mock.url + '/v1', model: 'mock-model', default: true });
  const c = await tavo.api('POST', '/api/library/character', { name: 'Decorator', firstMes: 'Which colour?' });
  chatId = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Paint' })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** @param {import('playwright-core').Page} page @param {string} rgb */
const bodyBecomes = (page, rgb) => page.waitForFunction((want) => getComputedStyle(document.body).backgroundColor === want, rgb, { timeout: 15000 });

test('the current theme follows the library: set elsewhere, updated by a model\'s tool, reset — no reload', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByText('Which colour?').waitFor();
  const own = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  let loads = 0;
  page.on('load', () => loads++);

  await tavo.api('PUT', '/api/settings/theme.current', { value: themeId });
  await bodyBecomes(page, 'rgb(32, 64, 96)');

  await page.getByRole('textbox', { name: 'Message' }).fill('Make it darker.');
  await page.getByRole('button', { name: 'Send' }).click();
  const allow = page.getByRole('button', { name: 'Allow' });
  const said = page.getByText('Repainted.');
  await Promise.race([said.waitFor({ timeout: 20000 }), allow.waitFor({ timeout: 20000 }).then(() => allow.click())]);
  await said.waitFor({ timeout: 20000 });
  await bodyBecomes(page, 'rgb(16, 32, 48)');
  await shot(page, 'theme-live-updated');

  await tavo.api('PUT', '/api/settings/theme.current', { value: 0 });
  await bodyBecomes(page, own);
  assert.equal(loads, 0, 'no reload');
  assert.equal(await page.evaluate(() => localStorage.getItem('tavo.theme')), null, 'the choice is the library\'s, not this browser\'s');

  // Applying in the app writes the setting every door reads.
  await page.goto(`${tavo.url}/themes`);
  await page.getByRole('list', { name: 'Themes' }).getByText('Live night').click();
  await page.getByRole('button', { name: 'Apply' }).click();
  await bodyBecomes(page, 'rgb(16, 32, 48)');
  const settings = await tavo.api('GET', '/api/settings');
  assert.equal(settings.find((/** @type {any} */ r) => r.key === 'theme.current').value, themeId);

  // A model's tool rebinds the current theme (`apply: true`): the open chat restyles at once.
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByText('Repainted.').waitFor();
  const loadsBefore = loads;
  await page.getByRole('textbox', { name: 'Message' }).fill('Use the dawn theme.');
  await page.getByRole('button', { name: 'Send' }).click();
  const switched = page.getByText('Switched to dawn.');
  await Promise.race([switched.waitFor({ timeout: 20000 }), allow.waitFor({ timeout: 20000 }).then(() => allow.click())]);
  await switched.waitFor({ timeout: 20000 });
  await bodyBecomes(page, 'rgb(96, 64, 32)');
  assert.equal(loads, loadsBefore, 'no reload');
  await shot(page, 'theme-live-applied');
  assert.deepEqual(errors, []);
  await page.close();
});
