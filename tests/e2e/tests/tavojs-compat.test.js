// tavo.generate, triggerSlash and the TavernHelper (JS-Slash-Runner) shim in real Chromium
// (seed 002 "生成请求" and "兼容性", issue 17): a bubble calls them and the test checks the
// return values, what reached the provider (the mock's request log) and what landed in the
// store through the HTTP API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMock, startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  mock = await startMock({ turns: [{ text: 'Mock says hi.' }], repeatLast: true });
  tavo = await startTavo({ mock, settings: { 'rendering.javascript': 'auto' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
});

/** The provider's requests so far. */
const requests = () =>
  readFileSync(join(mock.dir, 'requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** A bubble that runs `body` (an async function body) and stores `R` as the chat variable `key`. @param {string} key @param {string} body */
const probe = (key, body) => `<p id="p">probe ${key}</p><script>
(async () => {
  const R = {};
  const step = async (k, f) => { try { R[k] = await f(); } catch (e) { R[k] = 'ERR ' + e.message; } };
  ${body}
  tavo.set(${JSON.stringify(key)}, R);
  document.getElementById('p').textContent = 'done ${key}';
})();
</script>`;

test('tavo.generate: the whole text, context off by default, options on the wire, nothing stored', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Gina'], 'Generate');
  await addMessage(tavo, chatId, 'We met at the harbour.', characters[0]);
  const before = requests().length;
  await addMessage(tavo, chatId, probe('gen', `
  await step('plain', () => tavo.generate('Summarise today in one line'));
  await step('ctx', () => tavo.generate('Three suggestions', { context: true, settings: { temperature: 0.25, maxCompletionTokens: 77 } }));
  await step('empty', () => tavo.generate('  '));
  await step('badPreset', () => tavo.generate('x', { preset: { id: 98765 } }));
  await step('badSetting', () => tavo.generate('x', { settings: { nope: 1 } }));
  `), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  if (process.env.TJ_DEBUG) page.on('console', (m) => console.log('console', m.text()));
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const R = (await until(async () => (await vars(tavo, chatId)).chat.gen, 20000, 'the generate probe')).valueOf();
  assert.equal(R.plain, 'Mock says hi.');
  assert.equal(R.ctx, 'Mock says hi.');
  assert.match(R.empty, /^ERR tavo.generate needs a prompt/);
  assert.match(R.badPreset, /^ERR preset 98765 does not exist/);
  assert.match(R.badSetting, /^ERR .*nope/);
  const sent = requests().slice(before);
  assert.equal(sent.length, 2, 'refused calls reach no provider');
  assert.deepEqual(sent[0].body.messages, [{ role: 'user', content: 'Summarise today in one line' }]);
  const ctx = sent[1].body;
  assert.ok(ctx.messages.some((/** @type {any} */ m) => String(m.content).includes('We met at the harbour.')), 'context: the history is sent');
  assert.deepEqual(ctx.messages.at(-1), { role: 'user', content: 'Three suggestions' });
  assert.equal(ctx.temperature, 0.25);
  assert.equal(ctx.max_tokens, 77);
  const msgs = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.equal(msgs.messages.length, 2, 'tavo.generate writes no message');
  assert.deepEqual(errors, []);
  await page.close();
});

test('triggerSlash: variables and pipes, /send /sendas /sys /echo /gen, unknown commands refused before anything runs', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Hana', 'Ivo'], 'Slash');
  await addMessage(tavo, chatId, probe('slash', `
  await step('setget', () => triggerSlash('/setvar key=hp 10 | /addvar key=hp 5 | /getvar hp'));
  R.syncAfter = tavo.get('hp');
  await step('pipe', () => triggerSlash('/pass pipe-text | /echo got {{pipe}}'));
  await step('macro', () => triggerSlash('/setvar key=name "Rin Tohsaka" | /echo hi {{getvar::name}}'));
  await step('global', () => triggerSlash('/setglobalvar key=g 1 | /incglobalvar g | /getglobalvar g'));
  await step('list', () => triggerSlash('/setvar key=bag ["a"] | /addvar key=bag b | /getvar bag'));
  await step('flush', () => triggerSlash('/setvar key=tmp 1 | /flushvar tmp | /getvar tmp'));
  await step('send', () => triggerSlash('/send I open the door'));
  await step('sendas', () => triggerSlash('/sendas name=Ivo Welcome in.'));
  await step('sys', () => triggerSlash('/sys The rain stops.'));
  await step('noMember', () => triggerSlash('/sendas name=Nobody hello'));
  await step('gen', () => triggerSlash('/gen say hi | /setvar key=said'));
  await step('unknown', () => triggerSlash('/setvar key=never 1 | /qr Button'));
  await step('notCommand', () => triggerSlash('hello'));
  await step('helper', () => TavernHelper.triggerSlash('/echo via helper'));
  `), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const v = await until(async () => {
    const x = await vars(tavo, chatId);
    return x.chat.slash ? x : null;
  }, 30000, 'the slash probe');
  const R = v.chat.slash;
  assert.equal(R.setget, '15');
  assert.equal(R.syncAfter, 15, 'the frame\'s own snapshot is fresh after triggerSlash');
  assert.equal(R.pipe, 'got pipe-text');
  assert.equal(R.macro, 'hi Rin Tohsaka');
  assert.equal(R.global, '2');
  assert.equal(R.list, '["a","b"]');
  assert.equal(R.flush, '');
  assert.equal(R.send, '');
  assert.match(R.noMember, /^ERR \/sendas: “Nobody” is not a character of this chat/);
  assert.equal(R.gen, 'Mock says hi.');
  assert.match(R.unknown, /^ERR triggerSlash: \/qr is not supported in Tavo; supported: \/echo, /);
  assert.match(R.notCommand, /^ERR triggerSlash: “hello” is not a slash command/);
  assert.equal(R.helper, 'via helper');
  assert.equal(v.chat.hp, 15);
  assert.equal(v.chat.name, 'Rin Tohsaka');
  assert.equal(v.global.g, 2);
  assert.deepEqual(v.chat.bag, ['a', 'b']);
  assert.equal(v.chat.tmp, undefined);
  assert.equal(v.chat.said, 'Mock says hi.');
  assert.equal(v.chat.never, undefined, 'an unknown command stops the whole line before it runs');
  const msgs = (await tavo.api('GET', `/api/chats/${chatId}/messages`)).messages;
  const tail = msgs.slice(-3).map((/** @type {any} */ m) => [m.role, m.content, m.characterId ?? null]);
  assert.deepEqual(tail, [['user', 'I open the door', null], ['assistant', 'Welcome in.', characters[1]], ['system', 'The rain stops.', null]]);
  await page.getByText('via helper').first().waitFor();
  await page.locator('article.message', { hasText: 'The rain stops.' }).waitFor();
  await shot(page, 'tavojs-slash');
  assert.deepEqual(errors, []);
  await page.close();
});

test('/trigger starts a reply without a question (seed 002 marks no such call); TavernHelper variables, messages and eventOn(message_received)', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Juno'], 'Helper');
  await addMessage(tavo, chatId, 'first floor', characters[0]);
  await tavo.api('POST', `/api/ops/tavo_variable_set?chat=${chatId}`, { name: 'old', value: 1 });
  await tavo.api('POST', `/api/ops/tavo_variable_set?chat=${chatId}`, { name: 'stats', value: { hp: 5, tags: ['x'] } });
  const helper = await addMessage(tavo, chatId, probe('helper', `
  R.vars = getVariables();
  await insertOrAssignVariables({ stats: { mp: 3 }, fresh: true });
  R.merged = getVariables();
  replaceVariables({ stats: R.merged.stats, only: 'me' });
  R.replaced = getVariables();
  R.global = getVariables({ type: 'global' });
  await step('msgs', async () => (await getChatMessages('0-1')).map((m) => [m.message_id, m.role, m.name, m.message.slice(0, 11)]));
  await step('last', () => getLastMessageId());
  await step('badRange', () => getChatMessages('soon'));
  await step('set', async () => { await setChatMessages([{ message_id: 0, message: 'first floor, edited' }]); return (await getChatMessages(0))[0].message; });
  await step('events', () => typeof tavern_events.MESSAGE_RECEIVED);
  eventOn(tavern_events.MESSAGE_RECEIVED, async (floor) => {
    const [m] = await getChatMessages(floor);
    tavo.set('received', { floor, message: m.message, role: m.role });
  });
  await step('trigger', () => triggerSlash('/trigger'));
  `), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const v = await until(async () => {
    const x = await vars(tavo, chatId);
    return x.chat.helper && x.chat.received ? x : null;
  }, 30000, 'the helper probe and the received event');
  const R = v.chat.helper;
  assert.deepEqual(R.vars, { old: 1, stats: { hp: 5, tags: ['x'] } });
  assert.deepEqual(R.merged, { old: 1, stats: { hp: 5, tags: ['x'], mp: 3 }, fresh: true });
  assert.deepEqual(R.replaced, { stats: { hp: 5, tags: ['x'], mp: 3 }, only: 'me' });
  assert.deepEqual(R.global, v.global, 'the global table');
  assert.deepEqual(R.msgs, [[0, 'assistant', 'Juno', 'first floor'], [1, 'assistant', 'Juno', '<p id="p">p']]);
  assert.equal(R.last, 1);
  assert.match(R.badRange, /^ERR the message range "soon" is not valid/);
  assert.equal(R.set, 'first floor, edited');
  assert.equal(R.events, 'string');
  assert.equal(R.trigger, '');
  // The store every door reads: the replaced table, the edit, the reply /trigger started.
  assert.equal(v.chat.old, undefined);
  assert.equal(v.chat.only, 'me');
  assert.deepEqual(v.chat.received, { floor: 2, message: 'Mock says hi.', role: 'assistant' });
  const msgs = (await tavo.api('GET', `/api/chats/${chatId}/messages`)).messages;
  assert.equal(msgs[0].content, 'first floor, edited');
  assert.equal(msgs.at(-1).content, 'Mock says hi.');
  assert.ok(msgs.some((/** @type {any} */ m) => m.id === helper));
  await page.locator('article.message', { hasText: 'Mock says hi.' }).waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
