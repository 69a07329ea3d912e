// Runs the `tavo` CLI on a test server's library (SQLite WAL: the CLI and the server share it).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './harness.js';

function tavoBin() {
  if (process.env.TAVO_BIN) return process.env.TAVO_BIN;
  const target = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(ROOT, 'target');
  for (const profile of ['release', 'debug']) {
    const p = join(target, profile, 'tavo');
    if (existsSync(p)) return p;
  }
  throw new Error('tavo is not built: run cargo build -p tavo --bins');
}

/** `tavo ARGS --data-dir DIR`, its stdout parsed as JSON. @param {string} dataDir @param {string[]} args */
export function tavoJson(dataDir, args) {
  const env = { ...process.env };
  delete env.TAVO_DATA_DIR;
  const out = execFileSync(tavoBin(), [...args, '--data-dir', dataDir], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out);
}
