// Builds a plugin package (.tpg, a zip) from a directory of sources, as a plugin author's
// packer would: every file under the directory, `/`-separated paths, stored (no compression
// is needed for a test). No dependency: the zip format's local headers, central directory and
// end record are written here, with each file's CRC-32.
import { readdirSync, readFileSync, statSync, writeFileSync, mkdtempSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The fixture plugins' sources. */
const FIXTURE_PLUGINS = fileURLToPath(new URL('../fixtures/plugins', import.meta.url));

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** @param {Buffer} buf */
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  /** @type {string[]} */
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/**
 * A zip of `files` (path → bytes).
 * @param {Record<string, Buffer|string>} files
 */
export function zip(files) {
  /** @type {Buffer[]} */
  const parts = [];
  /** @type {Buffer[]} */
  const central = [];
  let offset = 0;
  for (const [path, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    const name = Buffer.from(path, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    parts.push(local, name, data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt16LE(0, 10);
    c.writeUInt16LE(0, 12);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt16LE(0, 30);
    c.writeUInt16LE(0, 32);
    c.writeUInt16LE(0, 34);
    c.writeUInt16LE(0, 36);
    c.writeUInt32LE(0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/**
 * Packs the directory `dir` into `<tmp>/<name>.tpg` (or `.zip`); answers the file's path.
 * `edit` may change the files before packing (path → bytes).
 * @param {string} dir @param {{name?: string, ext?: string, edit?: (files: Record<string, Buffer>) => void}} [opts]
 */
export function packPlugin(dir, opts = {}) {
  /** @type {Record<string, Buffer>} */
  const files = {};
  for (const p of walk(dir)) files[relative(dir, p).split(sep).join('/')] = readFileSync(p);
  if (opts.edit) opts.edit(files);
  const out = join(mkdtempSync(join(tmpdir(), 'tavo-tpg-')), `${opts.name || 'plugin'}.${opts.ext || 'tpg'}`);
  writeFileSync(out, zip(files));
  return out;
}

/**
 * Installs the fixture plugin `tests/e2e/fixtures/plugins/<name>` on a running server through
 * `POST /api/plugins`, as the app's import does; fails the test unless it answers 201.
 * @param {{url: string}} tavo @param {string} name
 */
export async function installFixturePlugin(tavo, name) {
  const file = packPlugin(join(FIXTURE_PLUGINS, name), { name });
  const res = await fetch(`${tavo.url}/api/plugins`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip', 'x-tavo-request': '1', 'x-filename': `${name}.tpg` },
    body: readFileSync(file),
  });
  if (res.status !== 201) throw new Error(`installing ${name}: ${res.status} ${await res.text()}`);
}
