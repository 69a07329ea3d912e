// A server with accounts (issue 32) in real Chromium: two people log in in two browsers and chat
// at once, each with their own provider; neither sees the other's chats, library, replies or
// toasts. An admin shares a card with everyone, a user adds it to their library. The admin
// manages users in Settings › Users; a user who is not admin cannot; a
// disabled user is sent back to the login page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, launchBrowser, shot, watchErrors, until } from '../lib/harness.js';
import { startAccountsTavo } from '../lib/accounts.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let annMock;
/** @type {Awaited<ReturnType<typeof startMock>>} */ let bobMock;
/** @type {Awaited<ReturnType<typeof startAccountsTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let annBrowser;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let bobBrowser;
/** @type {{ann: number, bob: number}} */ const chats = { ann: 0, bob: 0 };

const slow = { delayMs: 120, chunk: 6 };

before(async () => {
  annMock = await startMock({ turns: [{ text: 'The knight bows to Ann and tells her a long tale of the north.', ...slow }] });
  bobMock = await startMock({ turns: [{ text: 'The pirate grins at Bob and sings a long song of the sea.', ...slow }] });
  tavo = await startAccountsTavo([
    { name: 'ann', password: 'password-ann', admin: true },
    { name: 'bob', password: 'password-bob' },
  ]);
  for (const [who, password, mock, character] of /** @type {const} */ ([
    ['ann', 'password-ann', annMock, 'Knight of Ann'],
    ['bob', 'password-bob', bobMock, 'Pirate of Bob'],
  ])) {
    const api = await tavo.as(who, password);
    await api('POST', '/api/connections', { name: 'mine', source: 'custom', protocol: 'openai-chat', baseUrl: mock.url + '/v1', model: 'mock-model', default: true });
    const c = await api('POST', '/api/library/character', { name: character, firstMes: `Hello, I am the ${character}.` });
    chats[who] = (await api('POST', '/api/chats', { characters: [c.id], name: `Chat of ${who}` })).id;
  }
  annBrowser = await launchBrowser();
  bobBrowser = await launchBrowser();
});

after(async () => {
  await annBrowser?.close();
  await bobBrowser?.close();
  await tavo?.stop();
  annMock?.stop();
  bobMock?.stop();
});

/** @param {import('playwright-core').Page} page @param {string} name @param {string} password */
async function logIn(page, name, password) {
  await page.goto(tavo.url + '/');
  const form = page.getByRole('form', { name: 'Log in' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Log in' }).click();
  await form.waitFor({ state: 'detached' });
}

test('two people chat at once, each in their own library; neither sees the other', async () => {
  const ann = await annBrowser.context.newPage();
  const bob = await bobBrowser.context.newPage();
  const errors = [...watchErrors(ann), ...watchErrors(bob)];
  await ann.goto(tavo.url + '/');
  await ann.getByRole('form', { name: 'Log in' }).waitFor();
  await shot(ann, 'accounts-login');
  // A wrong password says so and logs nobody in.
  await ann.getByLabel('Name').fill('ann');
  await ann.getByLabel('Password').fill('not-her-password');
  await ann.getByRole('button', { name: 'Log in' }).click();
  await ann.getByRole('alert').getByText('wrong user name or password').waitFor();
  await logIn(ann, 'ann', 'password-ann');
  await logIn(bob, 'bob', 'password-bob');

  // Toasts either page shows while both replies run.
  for (const page of [ann, bob]) {
    await page.evaluate(() => {
      const seen = /** @type {string[]} */ ([]);
      /** @type {any} */ (window).toastTexts = seen;
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('.toast > span')) if (!seen.includes(el.textContent || '')) seen.push(el.textContent || '');
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
  }
  await ann.goto(`${tavo.url}/chats/${chats.ann}`);
  await bob.goto(`${tavo.url}/chats/${chats.bob}`);
  await ann.getByText('Hello, I am the Knight of Ann.').waitFor();
  await bob.getByText('Hello, I am the Pirate of Bob.').waitFor();
  const send = async (/** @type {import('playwright-core').Page} */ page, /** @type {string} */ text) => {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  };
  await Promise.all([send(ann, 'Tell me of the north.'), send(bob, 'Sing of the sea.')]);
  // Both stream at the same time.
  await Promise.all([ann.getByRole('button', { name: 'Stop' }).waitFor(), bob.getByRole('button', { name: 'Stop' }).waitFor()]);
  await Promise.all([
    ann.getByText('tale of the north.').waitFor({ timeout: 30000 }),
    bob.getByText('song of the sea.').waitFor({ timeout: 30000 }),
  ]);
  await shot(ann, 'accounts-ann-chat');
  await shot(bob, 'accounts-bob-chat');
  assert.doesNotMatch(await ann.locator('main').innerText(), /Bob|pirate|sea/i);
  assert.doesNotMatch(await bob.locator('main').innerText(), /Ann|knight|north/i);

  // Libraries and chat lists are each their own.
  await bob.goto(`${tavo.url}/`);
  await bob.getByText('Pirate of Bob').first().waitFor();
  assert.equal(await bob.getByText('Knight of Ann').count(), 0);
  await bob.goto(`${tavo.url}/chats`);
  await bob.getByText('Chat of bob').first().waitFor();
  assert.equal(await bob.getByText('Chat of ann').count(), 0);
  for (const page of [ann, bob]) {
    const toasts = await page.evaluate(() => /** @type {any} */ (window).toastTexts || []);
    const other = page === ann ? /Bob|pirate/i : /Ann|knight/i;
    assert.ok(!toasts.some((/** @type {string} */ t) => other.test(t)), JSON.stringify(toasts));
  }
  assert.deepEqual(errors, []);
  await ann.close();
  await bob.close();
});

test('an admin shares a card with everyone; a user adds it to their own library, and only theirs changes', async () => {
  const ann = await annBrowser.context.newPage();
  const bob = await bobBrowser.context.newPage();
  const errors = [...watchErrors(ann), ...watchErrors(bob)];
  const annApi = await tavo.as('ann', 'password-ann');
  const knight = (await annApi('GET', '/api/library/character')).find((/** @type {any} */ c) => c.name === 'Knight of Ann');
  await ann.goto(`${tavo.url}/characters/${knight.id}`);
  await ann.getByRole('button', { name: 'Share with everyone' }).click();
  await ann.getByText('Shared Knight of Ann with everyone').waitFor();

  // Bob sees it under the library, adds it, and it is a character of his own.
  await bob.goto(`${tavo.url}/`);
  const shared = bob.getByRole('list', { name: 'Shared with everyone' });
  await shared.getByText('Knight of Ann').waitFor();
  await shared.getByText('shared by ann').waitFor();
  assert.equal(await bob.getByRole('button', { name: 'Stop sharing Knight of Ann' }).count(), 0, 'only an admin unpublishes');
  await shot(bob, 'accounts-shared-library');
  await bob.getByRole('button', { name: 'Add Knight of Ann to my library' }).click();
  await bob.getByText('Added Knight of Ann to your library').waitFor();
  const grid = bob.getByRole('list', { name: 'Characters' });
  await grid.getByText('Knight of Ann').waitFor();
  await grid.getByText('Knight of Ann').click();
  await bob.getByRole('button', { name: 'New chat' }).waitFor();
  assert.equal(await bob.getByRole('button', { name: 'Share with everyone' }).count(), 0, 'bob is no admin');

  // Ann's library did not change; bob's copy is his (ann's list has one knight).
  const annsKnights = (await annApi('GET', '/api/library/character')).filter((/** @type {any} */ c) => c.name === 'Knight of Ann');
  assert.equal(annsKnights.length, 1);
  // Ann stops sharing it: gone from the shared list, still in Bob's library.
  await ann.goto(`${tavo.url}/`);
  await ann.getByRole('button', { name: 'Stop sharing Knight of Ann' }).click();
  await ann.getByText('Knight of Ann is no longer shared').waitFor();
  await bob.goto(`${tavo.url}/`);
  await bob.getByText('Nothing is shared yet.').waitFor();
  await bob.getByRole('list', { name: 'Characters' }).getByText('Knight of Ann').waitFor();
  assert.deepEqual(errors, []);
  await ann.close();
  await bob.close();
});

test('the admin manages users in Settings › Users; others cannot; a disabled user is logged out', async () => {
  const ann = await annBrowser.context.newPage();
  const bob = await bobBrowser.context.newPage();
  await ann.goto(`${tavo.url}/settings`);
  await ann.getByText('Logged in as').waitFor();
  await ann.getByRole('link', { name: 'Users' }).click();
  const list = ann.getByRole('list', { name: 'Users' });
  await list.getByText('bob').waitFor();
  // Add a user from the app, who can then log in.
  const form = ann.getByRole('form', { name: 'Add a user' });
  await form.getByLabel('Name').fill('cid');
  await form.getByLabel('Password').fill('password-cid');
  await form.getByRole('button', { name: 'Add user' }).click();
  await list.getByText('cid').waitFor();
  await shot(ann, 'accounts-users');
  const cid = await tavo.as('cid', 'password-cid');
  assert.deepEqual((await cid('GET', '/api/session')).user.name, 'cid');

  // Bob is no admin: the screen and the route refuse him.
  await bob.goto(`${tavo.url}/settings/users`);
  await bob.getByText('Only an admin manages users.').waitFor();
  await bob.goto(`${tavo.url}/chats/${chats.bob}`);
  await bob.getByText('Hello, I am the Pirate of Bob.').waitFor();

  // Disabled by the admin, Bob is back at the login page at his next step.
  const row = list.locator('li', { hasText: /^bob/ });
  await row.getByRole('button', { name: 'Disable' }).click();
  await row.getByText('disabled').waitFor();
  await bob.reload();
  await bob.getByRole('form', { name: 'Log in' }).waitFor();
  await until(async () => (await bob.getByRole('form', { name: 'Log in' }).count()) === 1, 5000, 'the login page');
  await ann.close();
  await bob.close();
});
