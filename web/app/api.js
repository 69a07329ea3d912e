// The HTTP API, and nothing else: every request of the app goes through here.
// Requests that change state carry `X-Tavo-Request: 1` (the server's CSRF rule); the login
// is the HttpOnly session cookie, so no token is ever kept where a script can read it.

/** An error answer of the API (`{"error": {code, message, details}}`), or a network failure. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {any} [details]
   */
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** @type {(() => void) | null} */
let onUnauthorized = null;

/** Called whenever the server answers 401 (the login screen takes over). @param {() => void} f */
export function setUnauthorizedHandler(f) {
  onUnauthorized = f;
}

/**
 * @param {Response} res
 * @returns {Promise<ApiError>}
 */
async function errorOf(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  const e = body && body.error;
  if (res.status === 401 && onUnauthorized) onUnauthorized();
  return new ApiError(
    res.status,
    (e && e.code) || 'http_' + res.status,
    (e && e.message) || res.statusText || 'the server answered ' + res.status,
    e && e.details,
  );
}

/**
 * One JSON request.
 * @param {string} method
 * @param {string} path
 * @param {any} [body]
 * @param {{signal?: AbortSignal, headers?: Record<string, string>}} [opts]
 * @returns {Promise<any>}
 */
export async function api(method, path, body, opts = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json', ...(opts.headers || {}) };
  if (method !== 'GET' && method !== 'HEAD') headers['X-Tavo-Request'] = '1';
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', signal: opts.signal };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'cannot reach the tavo server: ' + String(e));
  }
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  const type = res.headers.get('content-type') || '';
  return type.includes('json') ? res.json() : res.text();
}

/** @param {string} path @param {{signal?: AbortSignal}} [opts] */
export const get = (path, opts) => api('GET', path, undefined, opts);
/** @param {string} path @param {any} [body] */
export const post = (path, body) => api('POST', path, body ?? {});
/** @param {string} path @param {any} body */
export const put = (path, body) => api('PUT', path, body);
/** @param {string} path */
export const del = (path) => api('DELETE', path);

/**
 * Calls an operation of the registry (`POST /api/ops/{name}`); answers its `result`.
 * @param {string} name
 * @param {any} args
 * @param {{chat?: number, confirm?: boolean}} [where]
 */
export async function op(name, args, where = {}) {
  const q = new URLSearchParams();
  if (where.chat != null) q.set('chat', String(where.chat));
  if (where.confirm) q.set('confirm', 'true');
  const qs = q.toString();
  const env = await api('POST', `/api/ops/${name}${qs ? '?' + qs : ''}`, args);
  return env && 'result' in env ? env.result : env;
}

/**
 * Uploads files to `POST /api/import` (multipart).
 * @param {File[]} files
 * @returns {Promise<{results: any[], imported: number, failed: number}>}
 */
export async function importFiles(files) {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  let res;
  try {
    res = await fetch('/api/import', {
      method: 'POST',
      body: form,
      headers: { 'X-Tavo-Request': '1', Accept: 'application/json' },
      credentials: 'same-origin',
    });
  } catch (e) {
    throw new ApiError(0, 'network', 'cannot reach the tavo server: ' + String(e));
  }
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

/**
 * @typedef {{id: string, event: string, data: any}} SseEvent
 */

/**
 * Follows an SSE stream with `fetch`, so the resumption point (`Last-Event-ID`) is ours to
 * send — after switching chats, the stream goes on from the last event shown, never repeating
 * a token. Reconnects after a network drop with the last id; stops on `finished`, on 204, or
 * when `signal` aborts.
 * @param {string} path
 * @param {{lastEventId?: string|null, signal: AbortSignal, onEvent: (e: SseEvent) => boolean|void}} opts
 *   `onEvent` returns true to stop.
 */
export async function followSse(path, opts) {
  let last = opts.lastEventId || null;
  let failures = 0;
  while (!opts.signal.aborted) {
    /** @type {Record<string, string>} */
    const headers = { Accept: 'text/event-stream' };
    if (last) headers['Last-Event-ID'] = last;
    let res;
    try {
      res = await fetch(path, { headers, signal: opts.signal, credentials: 'same-origin' });
    } catch (e) {
      if (opts.signal.aborted) return;
      if (++failures > 20) throw new ApiError(0, 'network', 'lost the event stream: ' + String(e));
      await new Promise((r) => setTimeout(r, Math.min(250 * failures, 3000)));
      continue;
    }
    if (res.status === 204) return;
    if (!res.ok) throw await errorOf(res);
    if (!res.body) return;
    failures = 0;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    /** @type {string[]} */
    let data = [];
    let event = 'message';
    let id = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          let line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (line === '') {
            if (data.length) {
              if (id) last = id;
              let parsed;
              try {
                parsed = JSON.parse(data.join('\n'));
              } catch {
                parsed = data.join('\n');
              }
              if (opts.onEvent({ id, event, data: parsed })) {
                reader.cancel().catch(() => {});
                return;
              }
            }
            data = [];
            event = 'message';
            id = '';
          } else if (line.startsWith(':')) {
            /* keep-alive comment */
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            let val = colon < 0 ? '' : line.slice(colon + 1);
            if (val.startsWith(' ')) val = val.slice(1);
            if (field === 'data') data.push(val);
            else if (field === 'event') event = val;
            else if (field === 'id') id = val;
          }
        }
      }
    } catch (e) {
      if (opts.signal.aborted) return;
    }
    // The stream ended without a final event (server restart, proxy): reconnect from `last`.
    await new Promise((r) => setTimeout(r, 300));
  }
}

/**
 * Sends raw bytes (an avatar image) with `PUT`.
 * @param {string} path @param {Blob} blob
 */
export async function putBytes(path, blob) {
  let res;
  try {
    res = await fetch(path, {
      method: 'PUT',
      body: blob,
      headers: { 'X-Tavo-Request': '1', 'Content-Type': blob.type || 'application/octet-stream', Accept: 'application/json' },
      credentials: 'same-origin',
    });
  } catch (e) {
    throw new ApiError(0, 'network', 'cannot reach the tavo server: ' + String(e));
  }
  if (!res.ok) throw await errorOf(res);
  return null;
}

/**
 * Sends raw bytes (a plugin package) with `POST` and answers the JSON reply.
 * @param {string} path @param {Blob} blob @param {string} [filename] named in the server's messages
 */
export async function postBytes(path, blob, filename) {
  /** @type {Record<string, string>} */
  const headers = { 'X-Tavo-Request': '1', 'Content-Type': 'application/zip', Accept: 'application/json' };
  if (filename) headers['X-Filename'] = encodeURIComponent(filename);
  let res;
  try {
    res = await fetch(path, { method: 'POST', body: blob, headers, credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'network', 'cannot reach the tavo server: ' + String(e));
  }
  if (!res.ok) throw await errorOf(res);
  return res.status === 204 ? null : res.json();
}
