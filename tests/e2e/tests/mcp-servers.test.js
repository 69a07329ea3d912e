// A published MCP server nobody here wrote (@modelcontextprotocol/server-everything, run with
// the system Node) as an outside server whose tools a mock model calls inside a reply: the
// approval dialog names the tool and shows its arguments, Allow runs it and its answer reaches
// the model, Deny keeps it from running.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until, ROOT } from '../lib/harness.js';

const EVERYTHING = join(ROOT, 'tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {number} */ let chat;

function tavoBin() {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, 'target');
  return process.env.TAVO_BIN || join(target, 'release', 'tavo');
}

before(async () => {
  mock = await startMock({
    turns: [
      { toolCalls: [{ name: 'mcp_everything_get-sum', arguments: { a: 2, b: 3 } }] },
      { text: 'The server says five.' },
      { toolCalls: [{ name: 'mcp_everything_echo', arguments: { message: 'do not run me' } }] },
      { text: 'Echo was refused.' },
    ],
    repeatLast: true,
  });
  tavo = await startTavo({
    mock,
    settings: { 'tools.enabled': true, 'tools.dynamicLoading': false },
    prepare: (dataDir) => {
      execFileSync(tavoBin(), ['mcp-server', 'add', 'everything', '--command', process.execPath,
        '--arg', EVERYTHING, '--arg', 'stdio', '--data-dir', dataDir], { stdio: 'ignore' });
    },
  });
  // The server connects its MCP servers in the background: wait until the tools are there.
  await until(async () => {
    const { servers } = await tavo.api('GET', '/api/mcp-servers');
    if (servers[0]?.status?.state === 'failed') throw new Error(`server-everything failed: ${servers[0].status.lastError}`);
    return servers[0]?.status?.state === 'connected';
  }, 20000, 'server-everything connected');
  const c = await tavo.api('POST', '/api/library/character', { name: 'Calc', firstMes: 'Ask me to add.' });
  chat = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'With MCP' })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** The mock's logged requests. @returns {any[]} */
function requests() {
  return readFileSync(join(mock.dir, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

test('the outside server is connected and its tools are namespaced', async () => {
  const { servers } = await tavo.api('GET', '/api/mcp-servers');
  assert.equal(servers.length, 1);
  assert.equal(servers[0].status.state, 'connected');
  assert.ok(servers[0].status.tools.includes('mcp_everything_get-sum'), servers[0].status.tools.join(', '));
  assert.ok(servers[0].status.tools.includes('mcp_everything_echo'));
});

test('an outside tool asks first: Allow runs it, Deny does not', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chat}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Add 2 and 3.');
  await page.getByRole('button', { name: 'Send' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Allow' }).waitFor({ timeout: 20000 });
  assert.match(await dialog.textContent() ?? '', /mcp_everything_get-sum/);
  assert.match(await dialog.textContent() ?? '', /outside MCP server/, 'the dialog says whose tool it is');
  assert.match(await dialog.getByLabel('Arguments').textContent() ?? '', /"a": 2/);
  await shot(page, 'mcp-server-approval');
  await dialog.getByRole('button', { name: 'Allow' }).click();
  await page.locator('article.message.assistant').last().getByText('The server says five.').waitFor({ timeout: 20000 });
  const afterSum = JSON.stringify(requests().at(-1));
  assert.match(afterSum, /The sum of 2 and 3 is 5/, 'the server’s answer went back to the model');

  await page.getByRole('textbox', { name: 'Message' }).fill('Echo something.');
  await page.getByRole('button', { name: 'Send' }).click();
  await dialog.getByRole('button', { name: 'Deny' }).waitFor({ timeout: 20000 });
  assert.match(await dialog.textContent() ?? '', /mcp_everything_echo/);
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await page.locator('article.message.assistant').last().getByText('Echo was refused.').waitFor({ timeout: 20000 });
  const afterEcho = JSON.stringify(requests().at(-1));
  assert.doesNotMatch(afterEcho, /Echo: do not run me/, 'a denied tool never ran');
  assert.match(afterEcho, /the user declined this mcp_everything_echo call/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the settings page shows the MCP connection text and the outside server', async () => {
  await tavo.api('PUT', '/api/settings/mcp.enabled', { value: true });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  const text = page.getByLabel('MCP connection text');
  await text.waitFor();
  const shown = (await text.textContent()) ?? '';
  assert.match(shown, /Server URL: http:\/\/127\.0\.0\.1:\d+\/mcp/);
  assert.match(shown, /Authorization: Bearer tavo_[0-9a-f]{40}/, 'enabling generated the token');
  await page.getByRole('listitem', { name: 'MCP server everything' }).getByText('connected').waitFor();
  await shot(page, 'settings-mcp');
  assert.deepEqual(errors, []);
  await page.close();
});
