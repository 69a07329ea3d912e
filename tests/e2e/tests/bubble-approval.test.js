// The approval policy governs a bubble's TavoJS writes as it governs every other door (issue
// 29): with a standing Deny, a script's write is refused with an error it can catch
// (`e.code === 'permission_denied'`), nothing changes, and the audit log names the door
// (`http`: a bubble's calls are operation calls); once the choice is dropped the same
// script's writes land.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shot } from '../lib/harness.js';
import { bubbleLab, bubbleReport, bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

const lab = bubbleLab();

/** A bubble that tries two writes (a strict one and a soft one) and reports what it caught. */
const WRITER = `<div id="out">trying</div>
<script>
(async () => {
  const R = {};
  const attempt = async (k, f) => {
    try { R[k] = { ok: true, value: await f() }; } catch (e) { R[k] = { ok: false, code: e.code ?? null, message: e.message }; }
  };
  await attempt('rename', async () => (await tavo.chat.update({ name: 'Renamed by a bubble' })).name);
  await attempt('append', () => tavo.message.append({ content: 'appended by a bubble' }));
  tavo.set('report', R);
  document.getElementById('out').textContent = 'done';
})();
</script>`;

test('a standing Deny refuses a bubble write with a catchable permission_denied; dropping it lets the write land', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Ward'], 'Guarded');
  await addMessage(tavo, chatId, WRITER, characters[0]);
  for (const tool of ['tavo_chat_update', 'tavo_message_append']) {
    await tavo.api('PUT', `/api/approvals/${tool}`, { approval: 'deny' });
  }
  const before = await tavo.api('GET', `/api/chats/${chatId}/messages`);

  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'report');
  for (const k of ['rename', 'append']) {
    assert.equal(R[k].ok, false, `${k}: ${JSON.stringify(R[k])}`);
    assert.equal(R[k].code, 'permission_denied', `${k}: ${JSON.stringify(R[k])}`);
  }
  // Nothing changed.
  assert.equal((await tavo.api('GET', `/api/library/chat/${chatId}`)).name, 'Guarded');
  const after = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.deepEqual(after.messages.map((/** @type {any} */ m) => m.id), before.messages.map((/** @type {any} */ m) => m.id));
  // The audit log has the refused calls, through the operation door.
  const audit = await tavo.api('GET', '/api/audit?limit=50');
  for (const tool of ['tavo_chat_update', 'tavo_message_append']) {
    const row = audit.entries.find((/** @type {any} */ e) => e.action === `tool.${tool}` && e.target === `chat:${chatId}`);
    assert.ok(row, `an audit row for ${tool}: ${JSON.stringify(audit.entries.map((/** @type {any} */ e) => e.action))}`);
    assert.equal(row.details.door, 'http');
    assert.equal(row.details.status, 'error');
  }
  await page.frameLocator('iframe.bubble-frame').first().getByText('done').waitFor();
  await shot(page, 'bubble-approval-denied');

  // Drop every standing choice: the same script's writes land.
  await tavo.api('DELETE', '/api/approvals');
  await tavo.api('POST', `/api/ops/tavo_variable_unset?chat=${chatId}`, { name: 'report' });
  await page.reload();
  const again = await until(async () => {
    const r = (await vars(tavo, chatId)).chat.report;
    return r && r.rename.ok ? r : null;
  }, 20000, 'the report after the choice was dropped');
  assert.equal(again.rename.value, 'Renamed by a bubble');
  assert.equal(again.append.ok, true, JSON.stringify(again.append));
  assert.equal(typeof again.append.value, 'number');
  assert.equal((await tavo.api('GET', `/api/library/chat/${chatId}`)).name, 'Renamed by a bubble');
  const now = await tavo.api('GET', `/api/chats/${chatId}/messages`);
  assert.equal(now.messages.at(-1).content, 'appended by a bubble');
  assert.deepEqual(errors, []);
  await page.close();
});
