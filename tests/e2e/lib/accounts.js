// `tavo serve --accounts` for the browser tests: users added with `tavo user add` (the password
// on stdin, as a script would), and an API helper per user that logs in and sends their
// session cookie.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, startProcess } from './harness.js';

/**
 * @param {{name: string, password: string, admin?: boolean}[]} users
 */
export async function startAccountsTavo(users) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tavo-e2e-accounts-'));
  for (const u of users) {
    const args = ['--data-dir', dataDir, 'user', 'add', u.name, ...(u.admin ? ['--admin'] : [])];
    const r = spawnSync(binary('tavo'), args, { input: u.password + '\n', encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tavo user add ${u.name}: ${r.stderr}`);
  }
  const { url, proc, log } = await startProcess(binary('tavo'), ['serve', '--accounts', '--addr', '127.0.0.1:0', '--data-dir', dataDir], { TAVO_TOKEN: '', RUST_LOG: 'warn' });
  /**
   * Logs `name` in and answers their API helper.
   * @param {string} name @param {string} password
   */
  const as = async (name, password) => {
    const res = await fetch(url + '/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tavo-request': '1' },
      body: JSON.stringify({ name, password }),
    });
    if (!res.ok) throw new Error(`login ${name}: ${res.status} ${await res.text()}`);
    const cookie = (res.headers.get('set-cookie') || '').split(';')[0];
    /** @param {string} method @param {string} path @param {any} [body] */
    return async (method, path, body) => {
      const r = await fetch(url + path, {
        method,
        headers: { 'content-type': 'application/json', 'x-tavo-request': '1', cookie },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };
  };
  return {
    url,
    dataDir,
    log,
    as,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
