// Text-to-speech in the app (issue 19 item 4, voice): a message's "Speak" button asks the
// server to speak it (its speaker's binding, the playback rules), the server synthesizes on a
// mock OpenAI-compatible /v1/audio/speech and publishes a `tts` event, and the open chat's
// player gets it and plays the audio the server serves; Settings → Voice edits the switches.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until } from '../lib/harness.js';

/** @type {Awaited<ReturnType<typeof startMock>>} */ let chatMock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {import('node:http').Server} */ let mock;
/** @type {any[]} */ const seen = [];
let chatId = 0;
let mira = 0;

/** Silence, 8 kHz mono 16-bit (0.1 s by default): audio every browser decodes. */
function wav(samples = 800) {
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
  mock = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url, auth: req.headers.authorization, body: JSON.parse(body || 'null') });
      if (req.url !== '/v1/audio/speech') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no"}}');
        return;
      }
      const long = String(seen[seen.length - 1].body?.input || '').includes('long pause');
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(long ? 8000 * 30 : 800));
    });
  });
  await new Promise((r) => mock.listen(0, '127.0.0.1', () => r(null)));
  const port = /** @type {any} */ (mock.address()).port;
  chatMock = await startMock({ turns: [{ text: '*lights the lamp* "The lamp is lit." [OOC: note]' }], repeatLast: true });
  tavo = await startTavo({ mock: chatMock });
  await tavo.api('POST', '/api/tts/connections', {
    name: 'speech', platform: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tts-1',
    apiKey: 'sk-voice-secret-0123456789', options: { responseFormat: 'wav' },
  });
  mira = (await tavo.api('POST', '/api/library/character', { name: 'Mira', firstMes: '*smiles* "Welcome back." <status>hp 10</status>' })).id;
  await tavo.api('PUT', `/api/tts/bindings/characters/${mira}`, { voice: 'nova' });
  chatId = (await tavo.api('POST', '/api/chats', { characters: [mira] })).id;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  chatMock?.stop();
  mock?.close();
});

test('Speak asks the server for audio and the player gets the tts event', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const greeting = page.getByRole('article', { name: 'Mira' }).first();
  await greeting.waitFor();
  const audioFetched = page.waitForRequest((r) => new URL(r.url()).pathname.startsWith('/api/tts/audio/'));
  await greeting.getByRole('button', { name: 'Speak' }).click();
  const player = page.locator('.tts-player');
  await page.waitForFunction(() => (document.querySelector('.tts-player')?.getAttribute('data-last-url') || '').startsWith('/api/tts/audio/'));
  const url = await player.getAttribute('data-last-url');
  assert.match(url || '', /^\/api\/tts\/audio\/[0-9a-f]{64}\.wav$/);
  // The server spoke the message in the speaker's bound voice, after the playback rules
  // (narration on, quote marks and <tag> content left out by default).
  assert.equal(seen.length, 1, JSON.stringify(seen));
  assert.equal(seen[0].body.voice, 'nova');
  assert.equal(seen[0].body.input, 'smiles Welcome back.');
  assert.equal(seen[0].auth, 'Bearer sk-voice-secret-0123456789');
  // The player plays what the server serves: its audio element fetched that address.
  assert.equal(new URL((await audioFetched).url()).pathname, url);
  const served = await page.evaluate(async (u) => { const r = await fetch(u); return [r.status, r.headers.get('content-type')]; }, url);
  assert.deepEqual(served, [200, 'audio/wav']);
  // A stop from anywhere (here the API, as tavo.tts.stop() does) reaches the player.
  await page.evaluate(() => { const a = document.querySelector('.tts-player audio'); if (a) a.setAttribute('data-before-stop', '1'); });
  await tavo.api('POST', `/api/chats/${chatId}/tts/stop`, {});
  await page.waitForFunction(() => document.querySelector('.tts-player')?.getAttribute('data-playing') === 'false');
  // Speaking again is served from the TTS cache: no second provider request. The server's
  // answer to the page's play says where the audio came from.
  const played = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/api/chats/${chatId}/tts/play`);
  await greeting.getByRole('button', { name: 'Speak' }).click();
  const again = await (await played).json();
  assert.equal(again.audio?.cached, true, JSON.stringify(again));
  assert.equal(again.audio?.url, url);
  assert.equal(seen.length, 1, 'cached');
  await shot(page, 'tts-speak');
  assert.ok(!(await page.content()).includes('sk-voice-secret-0123456789'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('Settings → Voice: connections listed with masked keys, switches and rules saved by the server', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/settings`);
  const voice = page.getByRole('region', { name: 'Voice' });
  await voice.getByRole('list', { name: 'Voice connections' }).getByText(/openai · tts-1/).waitFor();
  assert.ok(!(await page.content()).includes('sk-voice-secret-0123456789'), 'the key is masked');
  await voice.getByLabel('Only play quotes').check();
  await page.waitForFunction(async () => (await (await fetch('/api/tts/settings')).json()).onlyQuotes === true);
  await voice.getByRole('button', { name: 'Add rule' }).click();
  await voice.getByLabel('Rule name').fill('broken');
  await voice.getByLabel('Rule regex').fill('(');
  await voice.getByRole('button', { name: 'Save rules' }).click();
  await page.getByText(/rules\[0\]\.regex/).first().waitFor();
  await voice.getByLabel('Rule regex').fill('/\\[OOC.*?\\]/i');
  await voice.getByRole('button', { name: 'Save rules' }).click();
  await page.waitForFunction(async () => (await (await fetch('/api/tts/settings')).json()).rules.length === 1);
  const s = await tavo.api('GET', '/api/tts/settings');
  assert.deepEqual(s.rules, [{ name: 'broken', regex: '/\\[OOC.*?\\]/i', mode: 'exclude', enabled: true }]);
  await voice.scrollIntoViewIfNeeded();
  await shot(page, 'settings-voice');
  assert.deepEqual(errors, []);
  await page.close();
});

test('with auto-play on, a finished reply is spoken with the playback rules', async () => {
  await tavo.api('PUT', '/api/tts/settings', { autoPlay: true, onlyQuotes: true });
  const before = seen.length;
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  await page.getByRole('article', { name: 'Mira' }).first().waitFor();
  await page.getByRole('textbox', { name: 'Message' }).fill('Is it dark yet?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('article', { name: 'Mira' }).last().getByText(/The lamp is lit/).waitFor({ timeout: 15000 });
  // The player asked for the reply's message; the server spoke only the quote.
  await until(async () => seen.length > before, 10000, 'the reply spoken');
  assert.equal(seen.length, before + 1, JSON.stringify(seen.slice(before)));
  assert.equal(seen[before].body.input, 'The lamp is lit.');
  await page.waitForFunction(() => (document.querySelector('.tts-player')?.getAttribute('data-last-url') || '').startsWith('/api/tts/audio/'));
  assert.deepEqual(errors, []);
  await tavo.api('PUT', '/api/tts/settings', { autoPlay: false });
  await page.close();
});

test('with background playback off, speech pauses while the page is hidden and goes on when shown', async () => {
  await tavo.api('PUT', '/api/tts/settings', { backgroundPlayback: false });
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const greeting = page.getByRole('article', { name: 'Mira' }).first();
  await greeting.waitFor();
  await page.locator('.tts-player[data-background="off"]').waitFor({ state: 'attached' });
  // A click first: the page may then play audio, as after any user's tap.
  await greeting.getByRole('button', { name: 'Speak' }).click();
  await page.waitForFunction(() => (document.querySelector('.tts-player')?.getAttribute('data-last-url') || '').startsWith('/api/tts/audio/'));
  const greetingUrl = await page.locator('.tts-player').getAttribute('data-last-url');
  await tavo.api('POST', `/api/chats/${chatId}/tts/play`, { text: 'A long pause.', voice: { character: mira } });
  const audio = page.locator('.tts-player audio');
  const state = () => audio.evaluate((a) => {
    const el = /** @type {HTMLAudioElement} */ (a);
    return { paused: el.paused, time: el.currentTime, playing: document.querySelector('.tts-player')?.getAttribute('data-playing') };
  });
  await page.waitForFunction(() => {
    const a = /** @type {HTMLAudioElement | null} */ (document.querySelector('.tts-player audio'));
    return !!a && !a.paused && a.currentTime > 0.2;
  });
  assert.notEqual(await page.locator('.tts-player').getAttribute('data-last-url'), greetingUrl);
  /** @param {boolean} hidden */
  const setHidden = (hidden) => page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { value: h, configurable: true });
    Object.defineProperty(document, 'visibilityState', { value: h ? 'hidden' : 'visible', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
  await setHidden(true);
  const hidden = await state();
  assert.equal(hidden.paused, true, JSON.stringify(hidden));
  assert.equal(hidden.playing, 'true', 'still the chat\'s speech, only paused');
  // Kept sleep: "no time passes" has no event to wait for, only a span to watch. The positive
  // signal comes first (the audio is paused, above); then 300 ms in which playing audio would
  // have moved on by 0.3 s.
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(Math.abs((await state()).time - hidden.time) < 0.05, 'no time passes while hidden');
  await setHidden(false);
  await page.waitForFunction((t) => {
    const a = /** @type {HTMLAudioElement | null} */ (document.querySelector('.tts-player audio'));
    return !!a && !a.paused && a.currentTime > t;
  }, hidden.time);
  // On (the default), hiding the page changes nothing.
  await tavo.api('PUT', '/api/tts/settings', { backgroundPlayback: true });
  await page.locator('.tts-player[data-background="on"]').waitFor({ state: 'attached' });
  await setHidden(true);
  assert.equal((await state()).paused, false);
  await tavo.api('POST', `/api/chats/${chatId}/tts/stop`, {});
  assert.deepEqual(errors, []);
  await page.close();
});
