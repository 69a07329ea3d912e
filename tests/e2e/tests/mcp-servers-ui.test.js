// Settings → MCP, the outside servers' screen (issue 18's UI): add a real stdio server (the
// engine's small hand-written MCP server, crates/engine/tests/fixtures/misbehaving_mcp_server.py)
// through the form, see it listed connected with its tools, allow one tool everywhere (a reply
// then runs it without the dialog), disable it, remove it after the question; a server that
// cannot start shows its last error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors, ROOT } from '../lib/harness.js';

const SERVER = join(ROOT, 'crates/engine/tests/fixtures/misbehaving_mcp_server.py');

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({
    turns: [
      { toolCalls: [{ name: 'mcp_fixture_echo', arguments: { text: 'echoed without asking' } }] },
      { text: 'The echo came back.' },
    ],
    repeatLast: true,
  });
  tavo = await startTavo({ mock, settings: { 'tools.enabled': true, 'tools.dynamicLoading': false } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** @param {string} name */
async function server(name) {
  const { servers } = await tavo.api('GET', '/api/mcp-servers');
  return servers.find((/** @type {any} */ s) => s.name === name);
}

test('add a stdio server in Settings → listed with its tools → allow a tool → disable → remove', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  await page.getByText('None yet.').waitFor();
  await page.getByRole('button', { name: 'Add MCP server' }).click();
  const form = page.getByRole('form', { name: 'New MCP server' });
  await form.getByLabel('Name').fill('fixture');
  await form.getByLabel('Command', { exact: true }).fill('python3');
  await form.getByLabel('Arguments').fill(SERVER);
  await form.getByLabel('Environment').fill('FIXTURE_SECRET=do-not-show');
  await form.scrollIntoViewIfNeeded();
  await shot(page, 'settings-mcp-add');
  await form.getByRole('button', { name: 'Add server' }).click();

  const row = page.getByRole('listitem', { name: 'MCP server fixture' });
  await row.getByText('connected').waitFor({ timeout: 20000 });
  await row.getByText(/\d+ tools/).waitFor();
  assert.match((await row.textContent()) ?? '', /env FIXTURE_SECRET \(hidden\)/);
  assert.doesNotMatch((await page.content()), /do-not-show/, 'an env value is never shown');
  const stored = await server('fixture');
  assert.equal(stored.command, 'python3');
  assert.deepEqual(stored.args, [SERVER]);
  assert.equal(stored.env.FIXTURE_SECRET, '(hidden)');
  assert.match((await row.textContent()) ?? '', new RegExp(`${stored.status.tools.length} tools`));
  assert.ok(stored.status.tools.includes('mcp_fixture_echo'));

  // Per-tool approval: every outside tool asks until the user chooses.
  await row.getByText('Tools and approval').click();
  const echo = row.getByLabel('Approval for mcp_fixture_echo');
  assert.equal(await echo.inputValue(), 'ask');
  await echo.selectOption('allow');
  await page.waitForFunction(async () => {
    const r = await fetch('/api/mcp-servers').then((x) => x.json());
    return r.servers[0]?.approvals?.mcp_fixture_echo === 'allow';
  });
  assert.equal(await row.getByLabel('Approval for mcp_fixture_echo').inputValue(), 'allow');
  await row.scrollIntoViewIfNeeded();
  await shot(page, 'settings-mcp-servers');

  // Allowed everywhere: a reply runs it with no dialog.
  const c = await tavo.api('POST', '/api/library/character', { name: 'Echoer', firstMes: 'Say something.' });
  const chat = (await tavo.api('POST', '/api/chats', { characters: [c.id], name: 'Echo chat' })).id;
  const chatPage = await browser.context.newPage();
  const chatErrors = watchErrors(chatPage);
  await chatPage.goto(`${tavo.url}/chats/${chat}`);
  await chatPage.getByRole('textbox', { name: 'Message' }).fill('Echo, please.');
  await chatPage.getByRole('button', { name: 'Send' }).click();
  await chatPage.locator('article.message.assistant').last().getByText('The echo came back.').waitFor({ timeout: 20000 });
  assert.equal(await chatPage.getByRole('dialog').count(), 0, 'no approval dialog for an allowed tool');
  assert.deepEqual(chatErrors, []);
  await chatPage.close();

  // Disable: stopped, and the list says so.
  await row.getByRole('checkbox', { name: 'Enable fixture' }).uncheck();
  await row.getByText('stopped').waitFor({ timeout: 10000 });
  assert.equal((await server('fixture')).enabled, false);
  assert.equal(await row.getByRole('checkbox', { name: 'Enable fixture' }).isChecked(), false);

  // Remove asks first: dismissing keeps it, accepting removes it. Every removal the page asks
  // the server for is counted: the accepted one must be the only one.
  /** @type {string[]} */
  const removals = [];
  page.on('request', (r) => { if (r.method() === 'DELETE' && new URL(r.url()).pathname.startsWith('/api/mcp-servers/')) removals.push(r.url()); });
  const dismissed = new Promise((resolve) => page.once('dialog', (d) => { d.dismiss().then(resolve, resolve); }));
  await row.getByRole('button', { name: 'Remove fixture' }).click();
  await dismissed;
  assert.ok(await server('fixture'), 'dismissing the question keeps the server');
  page.once('dialog', (d) => {
    assert.match(d.message(), /Remove the MCP server “fixture”/);
    d.accept();
  });
  await row.getByRole('button', { name: 'Remove fixture' }).click();
  await page.getByText('None yet.').waitFor();
  assert.equal(await server('fixture'), undefined);
  assert.equal(removals.length, 1, `only the accepted question removed the server: ${removals.join(', ')}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a server that cannot start is listed failed with its last error; a bad name is refused in words', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${tavo.url}/settings`);
  await page.getByRole('button', { name: 'Add MCP server' }).click();
  const form = page.getByRole('form', { name: 'New MCP server' });
  await form.getByLabel('Name').fill('broken');
  await form.getByLabel('Command', { exact: true }).fill('/nonexistent/mcp-server-binary');
  await form.getByRole('button', { name: 'Add server' }).click();
  const row = page.getByRole('listitem', { name: 'MCP server broken' });
  await row.getByText('failed').waitFor({ timeout: 25000 });
  await row.getByRole('alert').waitFor();
  assert.match((await row.getByRole('alert').textContent()) ?? '', /Last error: .+/);
  await row.scrollIntoViewIfNeeded();
  await shot(page, 'settings-mcp-failed');

  // The HTTP transport's form and a refused add (a taken name): the error stays in the form.
  await page.getByRole('button', { name: 'Add MCP server' }).click();
  await form.getByLabel('Name').fill('broken');
  await form.getByLabel('URL (streamable HTTP)').check();
  await form.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/mcp');
  await form.getByLabel('Headers').fill('Authorization: Bearer secret');
  await form.getByRole('button', { name: 'Add server' }).click();
  await form.getByRole('alert').waitFor();
  assert.match((await form.getByRole('alert').textContent()) ?? '', /exists already/);
  await page.close();
});
