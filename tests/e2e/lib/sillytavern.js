// What the side-by-side benchmarks (bench/st-*.js) share: SillyTavern started from its installed npm package
// (ST_DIR; see the header of bench/st-side-by-side.js) with a fresh data root and config in a given temporary
// folder, loopback only, no auth, no browser launch, no update/model downloads, on a free port; the wait for its
// page to be ready; and the median the benchmarks print.
import { spawn } from 'node:child_process';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** ST_DIR, checked to hold an installed SillyTavern. */
export function sillyTavernDir() {
  const dir = process.env.ST_DIR;
  if (!dir || !existsSync(join(dir, 'server.js'))) throw new Error('set ST_DIR to an installed SillyTavern (see the header)');
  return dir;
}

/** @returns {Promise<number>} */
export const freePort = () => new Promise((res) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = /** @type {any} */ (s.address()).port; s.close(() => res(p)); }); });
/** @param {number[]} xs */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * SillyTavern from `stDir` on a free loopback port with a fresh data root under `work`. With `prepare`, it is
 * called with the default user's folder (which it may fill, e.g. its `worlds/`) before the server starts.
 * @param {string} stDir @param {string} work @param {{prepare?: (user: string) => void}} [opts]
 */
export async function startSillyTavern(stDir, work, opts = {}) {
  const port = await freePort();
  const dataRoot = join(work, 'st-data');
  const configPath = join(work, 'st-config.yaml');
  const user = join(dataRoot, 'default-user');
  // Option names are those of ST_DIR/default/config.yaml. SillyTavern adds the options left out with their defaults.
  writeFileSync(configPath, [
    `dataRoot: ${JSON.stringify(dataRoot)}`,
    'listen: false', // loopback only
    `port: ${port}`,
    'browserLaunch:', '  enabled: false',
    'whitelistMode: true', 'whitelist:', '  - 127.0.0.1', '  - ::1',
    'basicAuthMode: false', 'enableUserAccounts: false',
    // No network here: keep it from trying to update extensions or download models and tokenizers.
    'extensions:', '  enabled: true', '  autoUpdate: false', '  models:', '    autoDownload: false',
    'enableDownloadableTokenizers: false',
    '',
  ].join('\n'));
  if (opts.prepare) opts.prepare(user);
  const proc = spawn(process.execPath, ['server.js', '--configPath', configPath], { cwd: stDir, stdio: ['ignore', 'pipe', 'pipe'] });
  process.on('exit', () => proc.kill('SIGKILL'));
  /** @type {string[]} */
  const log = [];
  createInterface({ input: /** @type {any} */ (proc.stderr) }).on('line', (l) => log.push(l));
  await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('SillyTavern did not start in 240 s:\n' + log.slice(-40).join('\n'))), 240000);
    createInterface({ input: /** @type {any} */ (proc.stdout) }).on('line', (l) => {
      log.push(l);
      if (l.includes('SillyTavern is listening on')) { clearTimeout(timer); res(null); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); rej(new Error(`SillyTavern exited with ${code}:\n${log.slice(-40).join('\n')}`)); });
  });
  const url = `http://127.0.0.1:${port}`;
  // A new data root starts with a first-run popup asking the persona's name, over everything; mark it done
  // (the same as answering it once). Nothing else in the settings is touched: "# of messages to load" keeps its default.
  const settingsFile = join(user, 'settings.json');
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  settings.firstRun = false;
  writeFileSync(settingsFile, JSON.stringify(settings, null, 4));
  // Its API wants a CSRF token bound to the session cookie.
  const t = await fetch(url + '/csrf-token');
  const cookie = t.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const { token } = await t.json();
  /** @param {string} path @param {any} body */
  const post = async (path, body) => {
    const isForm = body instanceof FormData;
    const r = await fetch(url + path, { method: 'POST', body: isForm ? body : JSON.stringify(body),
      headers: { 'x-csrf-token': token, cookie, ...(isForm ? {} : { 'content-type': 'application/json' }) } });
    if (!r.ok) throw new Error(`SillyTavern ${path}: ${r.status} ${await r.text()}`);
    return r;
  };
  return { url, user, post, proc, version: JSON.parse(readFileSync(join(stDir, 'package.json'), 'utf8')).version,
    stop: () => new Promise((res) => { proc.once('exit', res); proc.kill('SIGTERM'); }) };
}

/**
 * Waits until SillyTavern's page finished its init: APP_READY, which it re-fires to late listeners.
 * @param {import('playwright-core').Page} page
 */
export async function sillyTavernReady(page) {
  await page.waitForFunction(() => /** @type {any} */ (window).SillyTavern?.getContext, null, { timeout: 120000 });
  await page.evaluate(() => new Promise((r) => { const c = /** @type {any} */ (window).SillyTavern.getContext(); c.eventSource.once(c.eventTypes.APP_READY, r); }));
}
