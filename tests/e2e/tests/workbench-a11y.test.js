// The workbench's screens under axe-core: no serious or critical violations, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { webFromDisk } from '../lib/webdisk.js';
import { startTavo, launchBrowser, SERAPHINA } from '../lib/harness.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {Record<string, number>} */ const ids = {};

before(async () => {
  tavo = await startTavo();
  const form = new FormData();
  const { readFileSync } = await import('node:fs');
  form.append('file', new Blob([readFileSync(SERAPHINA)]), 'Seraphina.png');
  const imported = await (await fetch(tavo.url + '/api/import', { method: 'POST', body: form, headers: { 'x-tavo-request': '1' } })).json();
  ids.character = imported.results[0].characterId;
  ids.lorebook = imported.results[0].lorebookId ?? (await tavo.api('POST', '/api/library/lorebook', { name: 'W', entries: [{ name: 'e', content: 'c', keywords: ['k'] }] })).id;
  ids.preset = (await tavo.api('POST', '/api/library/preset', { name: 'P' })).id;
  ids.regex = (await tavo.api('POST', '/api/library/regex', { name: 'R', entries: [{ name: 'r', findRegex: '/a/g', replaceString: 'b' }] })).id;
  ids.chat = (await tavo.api('POST', '/api/chats', { characters: [ids.character], lorebooks: [ids.lorebook] })).id;
  browser = await launchBrowser({ bypassCSP: true });
  await webFromDisk(browser.context);
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

/**
 * @param {import('playwright-core').Page} page @param {string} screen
 * @param {string[]} [exclude] selectors left out (a theme's preview shows the theme's own colours)
 */
async function check(page, screen, exclude = []) {
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async (exclude) => {
    // @ts-ignore axe is injected above
    const r = await window.axe.run({ include: [document], exclude: exclude.map((x) => [x]) }, { resultTypes: ['violations'] });
    return r.violations.map((/** @type {any} */ v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 4).map((/** @type {any} */ n) => n.target.join(' ')) }));
  }, exclude);
  const serious = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
}

test('the editors, the inspector and the themes screen have no serious accessibility violations', async () => {
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    const page = await browser.context.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${tavo.url}/characters/${ids.character}/edit`);
    await page.getByRole('textbox', { name: 'Description' }).waitFor();
    await check(page, `character editor (${scheme})`);
    await page.goto(`${tavo.url}/lorebooks/${ids.lorebook}`);
    await page.getByRole('list', { name: 'Entries' }).getByRole('listitem').first().getByRole('button').first().click();
    await check(page, `lorebook editor (${scheme})`);
    await page.goto(`${tavo.url}/presets/${ids.preset}`);
    await page.getByRole('list', { name: 'Prompt entries' }).getByRole('listitem').first().getByRole('button').first().click();
    await check(page, `preset editor (${scheme})`);
    await page.goto(`${tavo.url}/regex/${ids.regex}`);
    await page.getByRole('region', { name: 'Tester' }).getByRole('textbox', { name: 'Sample text' }).fill('aaa');
    await page.getByRole('region', { name: 'Tester' }).getByRole('list', { name: 'Matches' }).waitFor();
    await check(page, `regex editor (${scheme})`);
    await page.goto(`${tavo.url}/chats/${ids.chat}/prompt`);
    await page.getByRole('region', { name: 'Token parts' }).waitFor();
    await check(page, `prompt inspector (${scheme})`);
    await page.goto(`${tavo.url}/themes`);
    await page.getByRole('list', { name: 'Themes' }).getByRole('button', { name: 'Default Light' }).click();
    await page.getByRole('form', { name: 'Theme Default Light' }).waitFor();
    // The preview shows the theme's own colours (the official light theme's white on #4F7CFF
    // is 3.7:1): the theme's choice, not the app's.
    await check(page, `themes (${scheme})`, ['.theme-preview']);
    await page.goto(`${tavo.url}/lorebooks`);
    await page.getByRole('searchbox', { name: 'Search' }).waitFor();
    await check(page, `lorebook list (${scheme})`);
    await page.close();
  }
});
