// tavo.image.generate and tavo.tts.play/stop in real Chromium (seed 002 "生图", "TTS"; issue
// 17), over the IMAGE and TTS routes: a data URL without saveAs (nothing stored), the virtual
// path with saveAs (stored, and its signed URL loads in the frame), the seed's throw without an
// image connection; tts.play speaks the host message's speaker without a voice, answers false
// for empty text and for a target without a binding, and tts.stop reaches the app's player.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startTavo, launchBrowser, shot, watchErrors } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, until } from '../lib/bubbles.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {import('node:http').Server} */ let mock;
/** @type {any[]} */ const seen = [];
let port = 0;

/** 0.1 s of silence, 8 kHz mono 16-bit. */
function wav() {
  const samples = 800;
  const b = Buffer.alloc(44 + samples * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + samples * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(16000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(samples * 2, 40);
  return b;
}

before(async () => {
  // One loopback mock for both platforms' OpenAI shapes.
  mock = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url, body: JSON.parse(body || 'null') });
      if (req.url === '/v1/images/generations') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ b64_json: PNG }] }));
      } else if (req.url === '/v1/audio/speech') {
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav());
      } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no"}}');
    });
  });
  await new Promise((r) => mock.listen(0, '127.0.0.1', () => r(null)));
  port = /** @type {any} */ (mock.address()).port;
  tavo = await startTavo({ settings: { 'rendering.javascript': 'auto' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.close();
});

/** A bubble that runs `body` and stores `R` as the chat variable `key`. @param {string} key @param {string} body */
const probe = (key, body) => `<p id="p">probe ${key}</p><script>
(async () => {
  const R = {};
  const step = async (k, f) => { try { R[k] = await f(); } catch (e) { R[k] = 'ERR ' + e.message; } };
  ${body}
  tavo.set(${JSON.stringify(key)}, R);
  document.getElementById('p').textContent = 'done ${key}';
})();
</script>`;

test('without an image connection tavo.image.generate throws; without a binding tts.play is false', async () => {
  const { chatId, characters } = await bubbleChat(tavo, ['Lena'], 'No media');
  await addMessage(tavo, chatId, probe('none', `
  await step('image', () => tavo.image.generate('a cat'));
  await step('emptyPrompt', () => tavo.image.generate(''));
  await step('tts', () => tavo.tts.play('hello'));
  await step('ttsEmpty', () => tavo.tts.play('   '));
  await step('badVoice', () => tavo.tts.play('x', { voice: { character: 1, persona: 2 } }));
  `), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const R = (await until(async () => (await vars(tavo, chatId)).chat.none, 20000, 'the probe'));
  assert.match(R.image, /^ERR .*image connection/i);
  assert.match(R.emptyPrompt, /^ERR tavo.image.generate needs a prompt/);
  assert.equal(R.tts, false);
  assert.equal(R.ttsEmpty, false);
  assert.match(R.badVoice, /^ERR tavo.tts.play: voice takes exactly one of character and persona/);
  assert.equal(seen.length, 0, 'nothing reached a provider');
  assert.deepEqual(errors.filter((e) => !/status of 404/.test(e)), []);
  await page.close();
});

test('tavo.image.generate: a data URL, or the saved path with saveAs; tts.play speaks the host speaker and tts.stop stops', async () => {
  await tavo.api('POST', '/api/images/connections', {
    name: 'pictures', platform: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'gpt-image-1', apiKey: 'sk-image-0123456789abcdef', default: true,
  });
  await tavo.api('POST', '/api/tts/connections', {
    name: 'speech', platform: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tts-1', apiKey: 'sk-voice-0123456789abcdef', options: { responseFormat: 'wav' },
  });
  const { chatId, characters } = await bubbleChat(tavo, ['Mina', 'Otto'], 'Media');
  await tavo.api('PUT', `/api/tts/bindings/characters/${characters[0]}`, { voice: 'nova' });
  await addMessage(tavo, chatId, probe('media', `
  await step('data', async () => (await tavo.image.generate('a calico cat', { aspectRatio: '1:1', negativePrompt: 'blurry' })).slice(0, 22));
  await step('saved', () => tavo.image.generate('a hero', { saveAs: 'hero.png' }));
  await step('badName', () => tavo.image.generate('x', { saveAs: '../hero.png' }));
  const img = new Image(); img.src = tavo.file.url('hero.png'); document.body.appendChild(img);
  await new Promise((r) => { img.onload = img.onerror = r; setTimeout(r, 5000); });
  R.heroWidth = img.naturalWidth;
  R.heroSigned = img.src.includes('/api/signed/');
  await step('speak', () => tavo.tts.play('Welcome back.'));
  await step('unbound', () => tavo.tts.play('Hi', { voice: { character: ${characters[1]} } }));
  await step('missing', () => tavo.tts.play('Hi', { voice: { character: { id: 987654 } } }));
  await step('stop', () => tavo.tts.stop());
  `), characters[0]);
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const R = (await until(async () => (await vars(tavo, chatId)).chat.media, 30000, 'the media probe'));
  assert.equal(R.data, 'data:image/png;base64,');
  assert.equal(R.saved, 'files/chat/hero.png');
  assert.match(R.badName, /^ERR /);
  assert.equal(R.heroWidth, 1, 'the saved image loads through its signed URL');
  assert.equal(R.heroSigned, true);
  assert.equal(R.speak, true);
  assert.equal(R.unbound, false);
  assert.equal(R.missing, false);
  assert.equal(R.stop, null);
  // The image requests carried the seed's options; only saveAs stored a file.
  const images = seen.filter((s) => s.path === '/v1/images/generations');
  assert.equal(images.length, 2, JSON.stringify(seen.map((s) => s.path)));
  assert.equal(images[0].body.prompt.includes('a calico cat'), true);
  const files = await tavo.api('POST', `/api/ops/tavo_file_list?chat=${chatId}`, {});
  assert.deepEqual(files.result.files.map((/** @type {any} */ f) => f.name), ['hero.png']);
  // The host message's speaker's voice, and the player in the app got the play and the stop.
  const speech = seen.filter((s) => s.path === '/v1/audio/speech');
  assert.equal(speech.length, 1);
  assert.equal(speech[0].body.voice, 'nova');
  assert.equal(speech[0].body.input, 'Welcome back.');
  await page.waitForFunction(() => (document.querySelector('.tts-player')?.getAttribute('data-last-url') || '').startsWith('/api/tts/audio/'));
  await shot(page, 'tavojs-media');
  assert.deepEqual(errors.filter((e) => !/status of 404/.test(e)), []);
  await page.close();
});
