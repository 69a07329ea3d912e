// What every browser test needs: a real `tavo serve` on a free loopback port with its own
// library directory, the scripted mock provider as its connection, and Debian's Chromium
// driven by playwright-core (never a downloaded browser). A missing browser or binary fails.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SHARED = resolve(ROOT, '../shared');
export const ARTEFACTS = resolve(ROOT, 'target/web-artefacts');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** A built binary (`tavo` or `mock-provider`): `TAVO_BIN` / `MOCK_PROVIDER_BIN`, else the release or debug build under `$CARGO_TARGET_DIR` or `target/`. @param {string} name */
export function binary(name) {
  const env = process.env[name === 'tavo' ? 'TAVO_BIN' : 'MOCK_PROVIDER_BIN'];
  if (env) return env;
  const target = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(ROOT, 'target');
  for (const profile of ['release', 'debug']) {
    const p = join(target, profile, name);
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} is not built: run cargo build -p tavo -p tavo-testkit --bins (or set TAVO_BIN / MOCK_PROVIDER_BIN)`);
}

/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * Spawns a program and waits for its first stdout line that is a URL.
 * @param {string} cmd @param {string[]} args @param {Record<string, string>} [env]
 * @returns {Promise<{url: string, proc: import('node:child_process').ChildProcess, log: string[]}>}
 */
export function startProcess(cmd, args, env = {}) {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(proc);
    /** @type {string[]} */
    const log = [];
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start in 20 s:\n${log.join('\n')}`)), 20000);
    createInterface({ input: /** @type {any} */ (proc.stderr) }).on('line', (l) => log.push(l));
    createInterface({ input: /** @type {any} */ (proc.stdout) }).on('line', (l) => {
      log.push(l);
      if (/^https?:\/\//.test(l.trim())) {
        clearTimeout(timer);
        resolvePromise({ url: l.trim(), proc, log });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited with ${code}:\n${log.join('\n')}`));
    });
  });
}

/**
 * The mock provider with a script of turns (see crates/testkit/src/script.rs).
 * @param {{turns: any[], repeatLast?: boolean}} script
 */
export async function startMock(script) {
  const dir = mkdtempSync(join(tmpdir(), 'tavo-mock-'));
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const { url, proc } = await startProcess(binary('mock-provider'), ['--port', '0', '--script', file, '--log', join(dir, 'requests.jsonl')]);
  return { url, proc, dir, stop: () => proc.kill('SIGTERM') };
}

/**
 * `tavo serve` on a free port with a fresh library. With `mock`, the mock is added as the
 * default connection; `settings` are set before the test starts.
 * @param {{token?: string, mock?: {url: string}, settings?: Record<string, any>, prepare?: (dataDir: string) => void}} [opts]
 */
export async function startTavo(opts = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tavo-e2e-'));
  // Library set-up the server must find at start (an MCP server to connect, for example).
  if (opts.prepare) opts.prepare(dataDir);
  const args = ['serve', '--addr', '127.0.0.1:0', '--data-dir', dataDir];
  if (opts.token) args.push('--token', opts.token);
  const { url, proc, log } = await startProcess(binary('tavo'), args, { TAVO_TOKEN: '', RUST_LOG: 'warn' });
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json', 'x-tavo-request': '1' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  /** @param {string} method @param {string} path @param {any} [body] */
  const api = async (method, path, body) => {
    const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  if (opts.mock) {
    await api('POST', '/api/connections', {
      name: 'mock', source: 'custom', protocol: 'openai-chat', baseUrl: opts.mock.url + '/v1', model: 'mock-model', default: true,
    });
  }
  for (const [key, value] of Object.entries(opts.settings || {})) await api('PUT', `/api/settings/${key}`, { value });
  return {
    url,
    dataDir,
    api,
    log,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium from the distribution; fails (never skips) when it is missing.
 * @param {{bypassCSP?: boolean, locale?: string}} [opts] bypassCSP lets a test inject axe-core; locale is the
 *   browser's language (navigator.language).
 */
export async function launchBrowser(opts = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); the browser tests need it`);
  }
  const userDataDir = mkdtempSync(join(tmpdir(), 'tavo-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    viewport: { width: 1280, height: 860 },
    bypassCSP: !!opts.bypassCSP,
    ...(opts.locale ? { locale: opts.locale } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot under target/web-artefacts/. @param {import('playwright-core').Page} page @param {string} name */
export async function shot(page, name) {
  mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, name + '.png'), fullPage: false });
}

/** Errors a page logged: a test fails on any. @param {import('playwright-core').Page} page */
export function watchErrors(page) {
  /** @type {string[]} */
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  return errors;
}

/**
 * Polls until `f` answers something truthy, and answers it: how a test waits for a condition
 * that no locator shows (a stored row, a file the mock wrote, a page's state). It never
 * stands in for a sleep: on `ms` without the condition it fails, naming `what`.
 * @template T @param {() => Promise<T>} f @returns {Promise<T>}
 */
export async function until(f, ms = 15000, what = 'the condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A PNG card of the shared corpus. */
export const SERAPHINA = join(SHARED, 'corpus/cards/st-default_Seraphina.png');
