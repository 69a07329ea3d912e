// A development aid: with TAVO_WEB_FROM_DISK=1 the browser gets web/ from the working tree
// instead of the copy embedded in the tavo binary (the API still comes from the server), so a
// change to the page is tested without relinking the binary. Without it, nothing changes.
import { readFileSync, existsSync } from 'node:fs';
import { join, extname } from 'node:path';
import { ROOT } from './harness.js';

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml' };

/** @param {import('playwright-core').BrowserContext} context */
export async function webFromDisk(context) {
  if (process.env.TAVO_WEB_FROM_DISK !== '1') return;
  const web = join(ROOT, 'web');
  await context.route((url) => !url.pathname.startsWith('/api/'), async (route) => {
    const url = new URL(route.request().url());
    let file = join(web, decodeURIComponent(url.pathname));
    if (!file.startsWith(web) || !existsSync(file) || !extname(file)) file = join(web, 'index.html');
    await route.fulfill({ status: 200, contentType: /** @type {any} */ (TYPES)[extname(file)] || 'application/octet-stream', body: readFileSync(file) });
  });
}
