// The frame around the screens: a token-protected server's login (the token never lands in
// storage a script can read), phone width, settings, and the addresses of the screens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startTavo, launchBrowser, shot, watchErrors, SERAPHINA } from '../lib/harness.js';

const TOKEN = 'e2e-token-0123456789abcdef';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'pong' }], repeatLast: true });
  tavo = await startTavo({ mock, token: TOKEN });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

test('a token-protected server asks for the token and keeps the session in an HttpOnly cookie', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  // The API stays closed without the session.
  const closed = await fetch(tavo.url + '/api/library/character');
  assert.equal(closed.status, 401);
  await page.goto(tavo.url + '/settings');
  const token = page.getByLabel('Access token');
  await token.waitFor();
  await shot(page, 'login');
  await token.fill('not-the-token-at-all');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('alert').getByText(/token is wrong/).waitFor();
  await token.fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  const stored = await page.evaluate(() => ({
    cookie: document.cookie,
    local: JSON.stringify(localStorage),
    session: JSON.stringify(sessionStorage),
  }));
  assert.ok(!stored.cookie.includes('tavo_session'), 'the session cookie is HttpOnly');
  for (const v of Object.values(stored)) assert.ok(!v.includes(TOKEN), 'the token is in no readable storage');
  const cookies = await browser.context.cookies(tavo.url);
  assert.ok(cookies.some((c) => c.name === 'tavo_session' && c.httpOnly && c.sameSite === 'Strict'));
  // errors: the 401s before login are expected console noise of fetch, nothing else.
  assert.deepEqual(errors.filter((e) => !/401/.test(e)), []);
  await page.close();
});

test('settings: connections are listed with the key masked, tested, and tool settings change', async () => {
  const page = await browser.context.newPage();
  await page.goto(tavo.url + '/settings');
  await page.getByRole('heading', { name: 'Connections', exact: true }).waitFor();
  await page.getByText('mock', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Test' }).click();
  await page.getByText(/Answered in \d+ ms: “pong”/).waitFor();
  const tools = page.getByLabel('Let the model call tools');
  await Promise.all([
    page.waitForResponse((r) => r.url().includes('/api/settings/tools.enabled') && r.ok()),
    tools.check(),
  ]);
  const rows = await (await fetch(tavo.url + '/api/settings', { headers: { authorization: `Bearer ${TOKEN}` } })).json();
  assert.equal(rows.find((/** @type {any} */ r) => r.key === 'tools.enabled').value, true);
  await page.getByRole('button', { name: 'Edit' }).click();
  const key = page.getByLabel('API key');
  await key.fill('sk-secret-key-0123456789');
  // The connection's own form: Voice and Image settings have Save buttons of their own.
  await page.locator('form').filter({ has: key }).getByRole('button', { name: 'Save' }).click();
  await page.getByText(/key sk-…6789/).waitFor();
  assert.ok(!(await page.content()).includes('sk-secret-key-0123456789'), 'the key is never shown again');
  await shot(page, 'settings');
  await page.close();
});

test('phone width: library, character and chat fit 360 px', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(tavo.url + '/');
  await page.getByLabel('Import', { exact: true }).setInputFiles(SERAPHINA);
  await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).waitFor();
  /** @param {string} name */
  const fits = async (name) => {
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 360, `${name} is ${width} px wide at a 360 px viewport`);
    await shot(page, 'phone-' + name);
  };
  await fits('library');
  await page.locator('.grid').getByRole('link', { name: 'Seraphina' }).click();
  await page.getByRole('button', { name: 'New chat' }).waitFor();
  await fits('character');
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForURL(/\/chats\/\d+$/);
  await page.getByRole('textbox', { name: 'Message' }).fill('ping');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('article.message.assistant').last().getByText('pong').waitFor({ timeout: 15000 });
  await fits('chat');
  // Back and forward move between the screens' addresses.
  await page.goBack();
  await page.waitForURL(/\/characters\/\d+$/);
  await page.goForward();
  await page.waitForURL(/\/chats\/\d+$/);
  await page.locator('article.message.assistant').last().getByText('pong').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('dark mode and an unknown address render, never a blank screen', async () => {
  const page = await browser.context.newPage();
  await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
  await page.goto(tavo.url + '/chats');
  await page.getByRole('heading', { name: 'Chats', level: 1 }).waitFor();
  await shot(page, 'chats-dark');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(246, 245, 251)', 'dark colours apply');
  await page.goto(tavo.url + '/no/such/screen');
  await page.getByRole('heading', { name: 'Not found' }).waitFor();
  await page.goto(tavo.url + '/chats/99999');
  await page.getByRole('alert').waitFor();
  await page.close();
});
