// The chat background a bubble sets (issue 31, item 7; seed 002 `tavo.chat.update({background})`)
// is shown behind the chat view and restored on reload, with the seed's precedence
// (useAvatar > image > color) and opacity for images; `null` clears it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shot } from '../lib/harness.js';
import { bubbleLab, bubbleChat, addMessage, bubbleReport } from '../lib/bubbles.js';

const lab = bubbleLab();

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('a bubble sets the chat background; it shows behind the chat, survives a reload, and follows the precedence', async () => {
  const { tavo } = lab;
  const { chatId, characters } = await bubbleChat(tavo, ['Scenery'], 'Backdrop');
  await tavo.api('POST', `/api/ops/tavo_file_save?chat=${chatId}`, { name: 'bg.png', content: `data:image/png;base64,${PNG}`, options: { encoding: 'dataUrl' } });
  const bubble = await addMessage(tavo, chatId, `<p>setting the scene</p><script>
    (async () => {
      await tavo.chat.update({ background: { image: 'files/chat/bg.png', opacity: 0.5 } });
      tavo.set('bg', 'set');
    })();
  </script>`, characters[0]);
  const { page, errors } = await bubbleReport(lab, chatId, 'bg');
  const layer = page.locator('.chat-background');
  const look = () => layer.evaluate((el) => {
    const s = getComputedStyle(el);
    return { image: s.backgroundImage, opacity: s.opacity, color: s.backgroundColor };
  });
  await layer.waitFor();
  let s = await look();
  assert.ok(s.image.includes(`/api/chats/${chatId}/files/bg.png`), s.image);
  assert.equal(s.opacity, '0.5');
  await shot(page, 'tavojs-chat-background');

  // Restored from the chat on reload (the bubble that set it is gone).
  await tavo.api('POST', `/api/ops/tavo_message_delete?chat=${chatId}&confirm=true`, { id: bubble });
  await page.reload();
  await layer.waitFor();
  assert.ok((await look()).image.includes('bg.png'));

  /** @param {any} background */
  const set = async (background) => {
    await tavo.api('POST', `/api/ops/tavo_chat_update?chat=${chatId}`, { chat: { background } });
    await page.reload();
  };
  // An image wins over a colour; a colour alone is '#AARRGGBB'.
  await set({ image: 'files/chat/bg.png', color: '#80FF0000' });
  await layer.waitFor();
  s = await look();
  assert.ok(s.image.includes('bg.png'), s.image);
  await set({ color: '#80FF0000' });
  await layer.waitFor();
  s = await look();
  assert.equal(s.image, 'none');
  assert.match(s.color, /^rgba\(255, 0, 0, 0\.5\d*\)$/);
  // The avatar wins over both.
  const res = await fetch(`${tavo.url}/api/characters/${characters[0]}/avatar`, {
    method: 'PUT', headers: { 'content-type': 'image/png', 'x-tavo-request': '1' }, body: Buffer.from(PNG, 'base64'),
  });
  assert.equal(res.status, 204);
  await set({ useAvatar: true, image: 'files/chat/bg.png', color: '#80FF0000' });
  await layer.waitFor();
  assert.ok((await look()).image.includes(`/api/characters/${characters[0]}/avatar`));
  // null clears the override.
  await set(null);
  await page.locator('.chat-head h1').waitFor();
  assert.equal(await layer.count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
