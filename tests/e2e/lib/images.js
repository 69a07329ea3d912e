// A loopback image provider in OpenAI's shape for the browser tests: every request answers one
// 1×1 PNG; what was asked is kept (a JSON body parsed, a multipart one by its length).
import { createServer } from 'node:http';

/** A 1×1 PNG, base64. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * Starts the provider and makes it the default image connection of `tavo`.
 * @param {{api: (m: string, p: string, b?: any) => Promise<any>}} tavo
 * @returns {Promise<{requests: any[], close: () => void}>}
 */
export async function imageProvider(tavo) {
  /** @type {any[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json = null;
      try {
        json = JSON.parse(body || 'null');
      } catch {
        json = { multipart: body.length };
      }
      requests.push({ path: req.url, ...json });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ b64_json: PNG }] }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(null)));
  const port = /** @type {any} */ (server.address()).port;
  await tavo.api('POST', '/api/images/connections', {
    name: 'pictures', platform: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'gpt-image-1', apiKey: 'sk-image-0123456789abcdef', default: true,
  });
  return { requests, close: () => server.close() };
}
