// get → modify → update from a bubble works on an imported SillyTavern preset (issue 31, item
// 3): `tavo.preset.update` takes what `tavo.preset.get` returned, SillyTavern's own keys
// (`chat_completion_source`, each prompt's `system_prompt`, …) included, and keeps them. An
// overwrite asks the card once (Allow).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from '../lib/harness.js';
import { bubbleLab, bubbleReport, bubbleChat, addMessage } from '../lib/bubbles.js';

const lab = bubbleLab();

/** @param {number} presetId */
const EDITOR = (presetId) => `<div id="out">editing</div>
<script>
(async () => {
  const R = {};
  try {
    const p = await tavo.preset.get(${presetId});
    p.name = 'Edited in a bubble';
    R.updated = await tavo.preset.update(p);
  } catch (e) {
    R.error = { code: e.code ?? null, message: e.message };
  }
  tavo.set('roundTrip', R);
  document.getElementById('out').textContent = 'done';
})();
</script>`;

test('a bubble writes back an imported SillyTavern preset as get returned it', async () => {
  const { tavo } = lab;
  const file = readFileSync(join(SHARED, 'corpus/presets/st-openai-Default.json'));
  const form = new FormData();
  form.append('kind', 'preset');
  form.append('file', new Blob([file], { type: 'application/json' }), 'Default.json');
  const res = await fetch(`${tavo.url}/api/import`, { method: 'POST', body: form, headers: { 'x-tavo-request': '1' } });
  const imported = await res.json();
  assert.equal(imported.imported, 1, JSON.stringify(imported));
  const presetId = imported.results[0].presetId;
  const before = await tavo.api('GET', `/api/library/preset/${presetId}`);
  assert.ok('chat_completion_source' in before, 'the import kept SillyTavern\'s keys');

  const { chatId, characters } = await bubbleChat(tavo, ['Editor'], 'Round trip');
  await addMessage(tavo, chatId, EDITOR(presetId), characters[0]);
  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'roundTrip', { allow: true });
  assert.equal(R.error, undefined, JSON.stringify(R.error));
  assert.equal(R.updated, presetId);
  const after = await tavo.api('GET', `/api/library/preset/${presetId}`);
  assert.equal(after.name, 'Edited in a bubble');
  for (const [k, v] of Object.entries(before)) {
    if (['name', 'revision', 'updatedAt'].includes(k)) continue;
    assert.deepEqual(after[k], v, `${k} kept`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
