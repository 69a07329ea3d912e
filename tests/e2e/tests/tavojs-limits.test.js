// A bubble's calls over the frame's rate are never left unanswered (issue 31, item 2): variable
// writes all land, in the order the script made them, and other calls wait their turn, so
// `Promise.all` settles; a call refused for being over a limit rejects with a catchable
// `limit_exceeded`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bubbleLab, bubbleReport, bubbleChat, addMessage, vars } from '../lib/bubbles.js';

const lab = bubbleLab();

const LOOP = `<div id="out">looping</div>
<script>
(async () => {
  for (let i = 0; i < 500; i++) {
    tavo.set('n' + i, i);
    tavo.set('last', i);
  }
  // 120 reads at once: 40 run at once, the rest wait their turn; every promise settles.
  const started = performance.now();
  const counts = await Promise.allSettled(Array.from({ length: 120 }, () => tavo.message.count()));
  tavo.set('reads', {
    fulfilled: counts.filter((c) => c.status === 'fulfilled').length,
    rejected: counts.filter((c) => c.status === 'rejected').map((c) => c.reason.code),
    ms: Math.round(performance.now() - started),
  });
  document.getElementById('out').textContent = 'done';
})();
</script>`;

test('500 tavo.set in a loop all land, in order, and a burst of reads all settle', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Looper'], 'Loops');
  await addMessage(tavo, chatId, LOOP, characters[0]);
  // `reads` is the script's last write: once it is stored, every write before it is.
  const { page, errors } = await bubbleReport(lab, chatId, 'reads', { ms: 90000 });
  const v = await vars(tavo, chatId);
  for (let i = 0; i < 500; i++) assert.equal(v.chat[`n${i}`], i, `n${i}`);
  assert.equal(v.chat.last, 499, 'the last write is the last one made');
  assert.deepEqual(v.chat.reads.rejected, []);
  assert.equal(v.chat.reads.fulfilled, 120);
  assert.deepEqual(errors, []);
  await page.close();
});

/** A SillyTavern chat file of `n` messages, alternating user and character. @param {number} n */
function longChat(n) {
  const lines = [JSON.stringify({ user_name: 'User', character_name: 'Archivist', create_date: '2026-01-01@00h00m00s', chat_metadata: {} })];
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ name: i % 2 ? 'Archivist' : 'User', is_user: i % 2 === 0, is_system: false, send_date: '2026-01-01@00h00m00s', mes: `message ${i}` }));
  }
  return lines.join('\n') + '\n';
}

const WHOLE = `<div id="out">reading</div>
<script>
(async () => {
  const all = await tavo.message.find([0, -1]);
  // A 3 MB "PNG" (its signature, then bytes), saved and loaded as a data URL.
  const bytes = new Uint8Array(3 * 1024 * 1024);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  const url = 'data:image/png;base64,' + btoa(bin);
  const path = await tavo.file.save('big.png', url);
  const back = await tavo.file.load('big.png', { encoding: 'dataUrl' });
  tavo.set('whole', {
    count: all.length,
    first: all[0].content,
    beforeMe: all[all.length - 2].content,
    path,
    same: back === url,
    length: back ? back.length : null,
    sent: url.length,
  });
  document.getElementById('out').textContent = 'done';
})();
</script>`;

test('a bubble gets whole results: 5,000 messages from message.find, a 3 MB image back from file.load', async () => {
  const { tavo } = lab;
  const form = new FormData();
  form.append('file', new Blob([longChat(5000)], { type: 'application/jsonl' }), 'archive.jsonl');
  const res = await fetch(`${tavo.url}/api/import`, { method: 'POST', body: form, headers: { 'x-tavo-request': '1' } });
  assert.equal(res.status, 200);
  const imported = await res.json();
  assert.equal(imported.imported, 1, JSON.stringify(imported));
  const chatId = imported.results[0].chatId;
  assert.equal(typeof chatId, 'number', JSON.stringify(imported.results[0]));
  await addMessage(tavo, chatId, WHOLE);
  const { value: v, page, errors } = await bubbleReport(lab, chatId, 'whole', { ms: 90000 });
  assert.equal(v.count, 5001, 'every message, the bubble\'s own included');
  assert.equal(v.first, 'message 0');
  assert.equal(v.beforeMe, 'message 4999');
  assert.equal(v.path, 'files/chat/big.png');
  assert.equal(v.same, true, `sent ${v.sent} characters, loaded ${v.length}`);
  assert.deepEqual(errors, []);
  await page.close();
});
