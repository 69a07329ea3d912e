// An automated accessibility check (axe-core, a test-only dependency) on every main screen:
// no serious or critical violations, in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startMock, startTavo, launchBrowser, SERAPHINA } from '../lib/harness.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ reasoning: 'thinking', text: 'An *answer* with **markdown**.' }], repeatLast: true });
  tavo = await startTavo({ mock });
  browser = await launchBrowser({ bypassCSP: true });
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** @param {import('playwright-core').Page} page @param {string} screen */
async function check(page, screen) {
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () => {
    // @ts-ignore axe is injected above
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((/** @type {any} */ v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help, targets: v.nodes.slice(0, 4).map((/** @type {any} */ n) => n.target.join(" ") + " " + (n.any[0]?.message || "")) }));
  });
  const serious = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
}

test('library, character (and its editor), chat (and its settings panel) and settings have no serious accessibility violations', async () => {
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    const page = await browser.context.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(tavo.url + '/');
    if (scheme === 'light') {
      await page.getByLabel('Import', { exact: true }).setInputFiles(SERAPHINA);
      await page.getByRole('region', { name: 'Import results' }).waitFor();
    }
    await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).waitFor();
    await check(page, `library (${scheme})`);
    await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).click();
    await page.getByRole('button', { name: 'New chat' }).waitFor();
    await check(page, `character (${scheme})`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('form', { name: 'Edit Seraphina' }).waitFor();
    await check(page, `character editor (${scheme})`);
    await page.getByRole('form', { name: 'Edit Seraphina' }).getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.waitForURL(/\/chats\/\d+$/);
    await page.getByRole('textbox', { name: 'Message' }).fill('Hi');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('article.message.assistant').last().getByText('An answer with').waitFor({ timeout: 15000 });
    await check(page, `chat (${scheme})`);
    await page.getByRole('button', { name: 'Chat settings' }).click();
    await page.getByRole('complementary', { name: 'Chat settings' }).getByRole('button', { name: 'Clone chat' }).waitFor();
    await check(page, `chat settings panel (${scheme})`);
    await page.goto(tavo.url + '/settings');
    await page.getByRole('heading', { name: 'Tools and web' }).waitFor();
    await page.locator('.setting').first().waitFor();
    await check(page, `settings (${scheme})`);
    await page.close();
  }
});

test('a group chat (composer, members panel), the new-group-chat form and the settings forms have no serious violations', async () => {
  const a = (await tavo.api('POST', '/api/library/character', { name: 'Ann', firstMes: 'Hi.' })).id;
  const b = (await tavo.api('POST', '/api/library/character', { name: 'Bo', firstMes: 'Yo.' })).id;
  const chat = (await tavo.api('POST', '/api/chats', { characters: [a, b], name: 'Group', replyMode: 'all' })).id;
  await tavo.api('PUT', `/api/chats/${chat}/members/${b}`, { muted: true });
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    const page = await browser.context.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${tavo.url}/chats/${chat}`);
    await page.getByRole('combobox', { name: 'Reply as' }).waitFor();
    await check(page, `group chat (${scheme})`);
    await page.getByRole('button', { name: 'Chat settings' }).click();
    await page.getByRole('button', { name: 'Unmute Bo' }).waitFor();
    await check(page, `group chat settings panel (${scheme})`);
    await page.goto(`${tavo.url}/chats`);
    await page.getByRole('button', { name: 'New group chat' }).click();
    await page.getByRole('form', { name: 'New group chat' }).getByLabel('Ann').waitFor();
    await check(page, `new group chat (${scheme})`);
    await page.goto(`${tavo.url}/settings`);
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('button', { name: 'Add search API' }).click();
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await page.getByRole('form', { name: 'New MCP server' }).waitFor();
    await page.getByRole('form', { name: 'New search API' }).waitFor();
    await check(page, `settings forms (${scheme})`);
    await page.close();
  }
});
