// The approval policy at the bubble door, in real Chromium: a bubble's TavoJS write goes through
// `POST /api/ops` and the one direct-call path of every door, so a tool the user set to `deny`
// (`PUT /api/approvals/{tool}`) is refused there as it is in the CLI and over MCP — the script
// gets an error it can catch, and nothing is written. The other doors are tested in
// crates/cli (approval doors).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;

before(async () => {
  tavo = await startTavo({ settings: { 'rendering.javascript': 'auto' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
});

const SCRIPT = `<div id="out">running</div>
<script>
(async () => {
  const R = {};
  try { R.denied = await tavo.memory.update({ enabled: true, memories: ['should not be kept'] }); }
  catch (e) { R.denied = 'ERR ' + e.message; }
  try { R.allowed = (await tavo.memory.current()).enabled; }
  catch (e) { R.allowed = 'ERR ' + e.message; }
  tavo.set('report', R);
  document.getElementById('out').textContent = 'done';
})();
</script>`;

test("a deny refuses a bubble's write, and the script can catch it", async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Alice']);
  await tavo.api('PUT', '/api/approvals/tavo_memory_update', { approval: 'deny' });
  const bubble = await addMessage(tavo, chatId, SCRIPT, characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const v = await until(async () => {
    const x = await vars(tavo, chatId, bubble);
    return x.chat.report ? x : null;
  }, 20000, 'the bubble report');
  const R = v.chat.report;
  assert.match(R.denied, /^ERR the user does not allow tavo_memory_update here/);
  assert.equal(R.allowed, false, 'a read the policy allows still runs');
  const memory = await tavo.api('POST', `/api/ops/tavo_memory_get?chat=${chatId}`, {});
  assert.deepEqual(memory.result.memories, [], 'nothing was written');
  assert.equal(memory.result.enabled, false);
  const audit = await tavo.api('GET', '/api/audit');
  const refused = audit.entries.find((/** @type {any} */ e) => e.action === 'tool.tavo_memory_update');
  assert.ok(refused, 'the refusal is in the audit log');
  assert.equal(refused.details.door, 'http');
  assert.equal(refused.details.status, 'error');
  await shot(page, 'approval-doors-bubble');
  assert.deepEqual(errors, []);
  await page.close();
});
