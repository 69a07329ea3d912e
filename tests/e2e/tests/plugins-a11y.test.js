// An automated accessibility check (axe-core) of the plugin screens, light and dark: Settings →
// Plugins with the risk warning of an import, a plugin's settings page (every element type, the
// breadcrumb), and a chat with plugins — the composer's actions menu open, and the side panel
// with sidebar rows and the function tools the model may call. No serious or critical violations.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, ROOT } from '../lib/harness.js';
import { bubbleChat, vars, until } from '../lib/bubbles.js';
import { packPlugin } from '../lib/tpg.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const FIXTURES = join(ROOT, 'tests/e2e/fixtures/plugins');

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chatId;

before(async () => {
  mock = await startMock({ turns: [{ text: 'A reply.' }], repeatLast: true });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true } });
  for (const name of ['notes-helper', 'edge-tools']) {
    const res = await fetch(`${tavo.url}/api/plugins`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip', 'x-tavo-request': '1', 'x-filename': `${name}.tpg` },
      body: readFileSync(packPlugin(join(FIXTURES, name), { name })),
    });
    assert.equal(res.status, 201, await res.text());
  }
  chatId = (await bubbleChat(tavo, ['Alice'], 'Accessible plugins')).chatId;
  await tavo.api('POST', `/api/ops/tavo_chat_update?chat=${chatId}`, { chat: { advancedRendering: true } });
  browser = await launchBrowser({ bypassCSP: true, locale: 'en-US' });
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
    return r.violations.map((/** @type {any} */ v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 4).map((/** @type {any} */ n) => n.target.join(' ') + ' ' + (n.any[0]?.message || '')) }));
  });
  const serious = result.filter((/** @type {any} */ v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
}

test('the plugin list, the risk warning, a settings page and a chat with plugins have no serious accessibility violations', async () => {
  for (const scheme of /** @type {const} */ (['light', 'dark'])) {
    const page = await browser.context.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${tavo.url}/settings/plugins`);
    await page.getByRole('listitem').filter({ hasText: 'Notes Helper' }).waitFor();
    await check(page, `plugin list (${scheme})`);

    await page.getByLabel('Import plugin').setInputFiles(packPlugin(join(FIXTURES, 'greeter'), { name: 'greeter' }));
    const warning = page.getByRole('dialog');
    await warning.waitFor();
    await check(page, `risk warning (${scheme})`);
    await warning.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('link', { name: 'Settings of Notes Helper' }).click();
    await page.getByRole('heading', { name: 'Notes Helper', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Breadcrumb' }).waitFor();
    await check(page, `plugin settings page (${scheme})`);

    await page.goto(`${tavo.url}/chats/${chatId}`);
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await until(async () => (await vars(tavo, chatId)).chat.edge_tools, 15000, 'the entries ran');
    await page.locator('summary[aria-label="Plugin actions"]').click();
    await page.getByRole('menu', { name: 'Plugin actions' }).waitFor();
    await check(page, `chat with the plugin actions menu (${scheme})`);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Chat settings', exact: true }).click();
    const panel = page.getByRole('complementary', { name: 'Chat settings' });
    await panel.getByRole('region', { name: 'Plugin · Notes Helper' }).waitFor();
    await panel.getByRole('list', { name: 'Function tools of Edge Tools' }).waitFor();
    await check(page, `chat settings with plugin rows and function tools (${scheme})`);
    await page.close();
  }
});
