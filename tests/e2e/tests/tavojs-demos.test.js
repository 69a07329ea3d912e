// The demos of seed 002, read from the seed itself and pasted into messages as a user would
// (issue 31, item 5): the generate demo asks with prompt(), generates a CCv3 card through the
// chat's connection and creates it (a call the seed marks: the app asks first); the image demo
// asks with prompt() (its default answer) and shows the generated image; the file demo saves
// the image and shows it by its path. Each runs to its end in real Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMock, startTavo, launchBrowser, shot, watchErrors, until } from '../lib/harness.js';
import { bubbleChat, addMessage, vars, reportingBubble } from '../lib/bubbles.js';
import { imageProvider } from '../lib/images.js';

const SEED = readFileSync(new URL('../../../../shared/seeds/002_4a6f88f25ab31981.txt', import.meta.url), 'utf8');

/** Every demo of the seed: from the first tag after a "使用示例" heading through its `</script>`. */
function demos() {
  /** @type {string[]} */
  const out = [];
  let at = 0;
  for (;;) {
    const h = SEED.indexOf('使用示例', at);
    if (h < 0) return out;
    const start = SEED.indexOf('\n<', h) + 1;
    const end = SEED.indexOf('</script>', start) + '</script>'.length;
    out.push(SEED.slice(start, end));
    at = end;
  }
}

/** What a model answers the demo: a card's data object (the demo reads `name` at the top and
 * joins an array `mes_example`), with a character_book, fenced as models fence JSON. */
const CARD = {
  data: { name: 'Seren the Lighthouse Keeper', description: 'Keeps the light.', first_mes: 'The lamp is lit.', mes_example: ['<START>', 'Seren: Hello.'], character_book: { entries: [{ keys: ['lamp'], content: 'The lamp never goes out.', enabled: true, insertion_order: 0 }] } },
};

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */ let browser;
/** @type {Awaited<ReturnType<typeof imageProvider>>} */ let images;

before(async () => {
  mock = await startMock({ turns: [{ text: '```json\n' + JSON.stringify(CARD.data) + '\n```' }], repeatLast: true });
  tavo = await startTavo({ mock, settings: { 'rendering.javascript': 'auto' } });
  images = await imageProvider(tavo);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tavo?.stop();
  mock?.stop();
  images?.close();
});

test('the seed has its three demos', () => {
  const d = demos();
  assert.equal(d.length, 3);
  assert.match(d[0], /tavo\.generate/);
  assert.match(d[1], /tavo\.image\.generate/);
  assert.match(d[2], /tavo\.file\.save/);
});

test('each demo of seed 002, pasted into a message, runs to its end', async () => {
  const [generateDemo, imageDemo, fileDemo] = demos();
  const { chatId, characters } = await bubbleChat(tavo, ['Demo host'], 'Seed demos');
  const ids = [];
  for (const d of [generateDemo, imageDemo, fileDemo]) ids.push(await addMessage(tavo, chatId, d, characters[0]));
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  /** The browser's prompt() the demos show: the generate demo gets a description, the image demo keeps its default. @type {{type: string, message: string, value: string}[]} */
  const asked = [];
  page.on('dialog', (d) => {
    asked.push({ type: d.type(), message: d.message(), value: d.defaultValue() });
    d.accept(d.defaultValue() || 'a lighthouse keeper who talks to gulls').catch(() => {});
  });
  await page.goto(`${tavo.url}/chats/${chatId}`);
  const frameOf = async (/** @type {number} */ id) => {
    const article = page.locator(`article.message[data-key="${id}"]`);
    await article.scrollIntoViewIfNeeded();
    const el = article.locator('iframe.bubble-frame');
    await el.waitFor();
    return el.contentFrame();
  };

  // The generate demo: prompt → tavo.generate → the card shown → create it (the app asks).
  const gen = await frameOf(ids[0]);
  await gen.getByRole('button', { name: '生成角色卡' }).click();
  await gen.getByText(`角色卡 《${CARD.data.name}》 已生成`).waitFor({ timeout: 20000 }).catch(async (e) => {
    throw new Error(`${e.message}\nstatus: ${await gen.locator('#status').innerText()}\nlog: ${(await gen.locator('#log').innerText()).slice(0, 500)}`);
  });
  await gen.getByRole('button', { name: '直接创建角色卡' }).click();
  const ask = page.getByRole('dialog', { name: /Allow scripts of “Demo host” to import a character/ });
  await ask.waitFor();
  await shot(page, 'tavojs-demo-generate');
  await ask.getByRole('button', { name: 'Allow' }).click();
  const made = await until(async () => (await tavo.api('GET', '/api/library/character')).find((/** @type {any} */ c) => c.name === CARD.data.name) ?? null, 15000, 'the created character');
  const full = await tavo.api('GET', `/api/library/character/${made.id}`);
  assert.equal(full.firstMes ?? full.first_mes ?? full.data?.first_mes, 'The lamp is lit.');
  assert.ok((await tavo.api('GET', '/api/library/lorebook')).some((/** @type {any} */ b) => /Seren/.test(b.name)), 'its character_book came along');

  // The image demo: prompt (its default) → tavo.image.generate → the image shown.
  const img = await frameOf(ids[1]);
  await img.getByRole('button', { name: '生成图片' }).click();
  await img.getByText('完成', { exact: true }).waitFor({ timeout: 20000 });
  await until(() => img.locator('#out').evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth === 1), 10000, 'the image drawn');

  // The file demo: generate, save, show by path, remember the path in a variable.
  const file = await frameOf(ids[2]);
  await file.getByRole('button', { name: '生成并存盘' }).click();
  await file.getByText('已存盘：files/chat/demo-cat.png').waitFor({ timeout: 20000 });
  await until(() => file.locator('#out img').evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth === 1), 10000, 'the saved image drawn by its path');
  assert.equal((await vars(tavo, chatId)).chat.lastCat, 'files/chat/demo-cat.png');
  await shot(page, 'tavojs-demos');

  // The saved file's stable path is accepted back as a reference image (seed 002).
  await addMessage(tavo, chatId, reportingBubble('reference', `
  R.path = tavo.file.url('demo-cat.png');
  R.image = (await tavo.image.generate('the same cat, awake', { referenceImages: [R.path] })).slice(0, 14);
  `), characters[0]);
  await page.reload();
  const ref = await until(async () => (await vars(tavo, chatId)).chat.reference ?? null, 20000, 'the reference probe');
  assert.deepEqual(ref, { path: 'files/chat/demo-cat.png', image: 'data:image/png' });
  assert.equal(images.requests.length, 3);
  assert.ok(images.requests[2].multipart || JSON.stringify(images.requests[2]).includes('base64') || images.requests[2].image, `the reference image was sent: ${JSON.stringify(images.requests[2]).slice(0, 200)}`);

  assert.deepEqual(asked.map((a) => [a.type, a.message]), [['prompt', '请输入想要生成的角色特点'], ['prompt', '请输入生图提示词']]);
  assert.equal(images.requests[0].prompt.includes('a calico cat sleeping on a keyboard'), true, 'the default answer of the prompt');
  assert.deepEqual(errors, []);
  await page.close();
});
