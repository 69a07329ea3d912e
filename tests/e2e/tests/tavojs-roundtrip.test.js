// get → modify → update from a bubble works on an imported SillyTavern preset (issue 31, item
// 3): `tavo.preset.update` takes what `tavo.preset.get` returned, SillyTavern's own keys
// (`chat_completion_source`, each prompt's `system_prompt`, …) included, and keeps them. An
// overwrite asks the card once (Allow).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from '../lib/harness.js';
import { bubbleLab, bubbleReport, bubbleChat, addMessage, reportingBubble } from '../lib/bubbles.js';

const lab = bubbleLab();

/** @param {number} presetId */
const EDITOR = (presetId) => reportingBubble('roundTrip', `
    const p = await tavo.preset.get(${presetId});
    p.name = 'Edited in a bubble';
    R.updated = await tavo.preset.update(p);`);

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
  // preset.update is no call the seed marks: no question.
  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'roundTrip');
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

const CCV3 = reportingBubble('ccv3', `
    R.characterId = await tavo.character.create({ spec: 'chara_card_v3', spec_version: '3.0', data: {
      name: 'Generated', first_mes: 'Hello.', description: 'Made by the generate demo.',
      character_book: { entries: [{ keys: ['harbour'], content: 'The harbour is foggy.', enabled: true, insertion_order: 0 }] },
    } });
    R.lorebookId = await tavo.lorebook.create({ name: 'CCv3 names', entries: [
      { keys: ['a'], secondary_keys: ['b'], constant: true, position: 'before_char', selective: true, content: 'x' },
    ] });
    R.entry = (await tavo.lorebook.get(R.lorebookId)).entries[0];`);

test('CCv3 names where the seed takes them: a wrapped card in character.create, CCv3 entry fields in lorebook.create', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Maker'], 'CCv3');
  await addMessage(tavo, chatId, CCV3, characters[0]);
  const { value: R, page, errors } = await bubbleReport(lab, chatId, 'ccv3', { allow: true });
  assert.equal(R.error, undefined, JSON.stringify(R.error));
  assert.equal(typeof R.characterId, 'number');
  const made = await tavo.api('GET', `/api/library/character/${R.characterId}`);
  assert.equal(made.name, 'Generated');
  assert.equal(made.firstMes, 'Hello.');
  // The card's character_book came along as a lorebook of its own.
  const books = await tavo.api('GET', '/api/library/lorebook');
  assert.ok(books.some((/** @type {any} */ b) => b.id !== R.lorebookId), JSON.stringify(books));
  assert.deepEqual(R.entry.keywords, ['a']);
  assert.deepEqual(R.entry.secondaryKeywords, ['b']);
  assert.equal(R.entry.strategy, 'constant');
  assert.equal(R.entry.injectionPosition, 'lorebookBefore');
  assert.equal(R.entry.secondaryKeywordStrategy, 'andAny');
  assert.ok(!('keys' in R.entry) && !('constant' in R.entry), 'the CCv3 names became Tavo\'s, not extras');
  assert.deepEqual(errors, []);
  await page.close();
});
