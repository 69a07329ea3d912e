// What the audit log kept of one tool call, drawn for a person: status and error code, how long
// it ran (and waited for the user), its arguments and its result as indented JSON — a long
// result folded, the 64 KiB cap said as "truncated" — and, when the result names a stored
// image (`tavo_image_generate`, a saved picture), the image itself, which opens full size.
import { html } from '../html.js';
import { askBubble } from '../store.js';
import { fileUrl } from '../files.js';

/** Characters of a result shown before it is folded. */
const FOLD = 2000;

/** @param {unknown} v */
const pretty = (v) => {
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
};

/**
 * The stored image a call's result names (`{path: 'files/chat/…', mimeType: 'image/…'}`), as
 * an address the page can load, or null.
 * @param {any} details @param {number|null} chatId
 */
export function resultImage(details, chatId) {
  const r = details && details.result && details.result.ok ? details.result.result : null;
  if (!r || typeof r !== 'object' || typeof r.path !== 'string') return null;
  const image = typeof r.mimeType === 'string' ? r.mimeType.startsWith('image/') : /\.(png|jpe?g|gif|webp|avif)$/i.test(r.path);
  return image ? fileUrl(r.path, chatId) : null;
}

/** @param {{src: string, alt: string}} props */
export function ToolImage({ src, alt }) {
  return html`<button type="button" class="tool-image" title="Open full size" onClick=${() => askBubble({ kind: 'preview', src })}>
    <img src=${src} alt=${alt} loading="lazy" />
  </button>`;
}

/** @param {{entry: any, chatId: number|null}} props `entry`: one row of GET /api/audit. */
export function ToolCallDetails({ entry, chatId }) {
  const d = entry.details || {};
  const tool = String(entry.action || '').replace(/^tool\./, '');
  const env = d.result || {};
  const ok = d.status === 'ok' || env.ok === true;
  const code = env.error && env.error.code;
  const result = pretty(env.ok ? env.result : env.error);
  const truncated = d.truncated === true || !!(env.result && typeof env.result === 'object' && env.result.truncated);
  const image = resultImage(d, chatId);
  return html`<div class="tool-details">
    <dl class="tool-facts">
      <dt>Status</dt><dd>${ok ? 'ok' : 'error'}${code ? html` <code>${code}</code>` : null}</dd>
      <dt>Time</dt><dd>${d.runMs ?? 0} ms${d.waitedMs ? `, ${d.waitedMs} ms waiting for you` : ''}</dd>
      ${d.door ? html`<dt>Door</dt><dd>${d.door}</dd>` : null}
      <dt>When</dt><dd><time datetime=${entry.at}>${new Date(entry.at).toLocaleString()}</time></dd>
    </dl>
    ${image ? html`<${ToolImage} src=${image} alt=${`Image from ${tool}`} />` : null}
    <h4>Arguments</h4>
    <pre class="tool-json" aria-label="Arguments">${pretty(d.arguments ?? {})}</pre>
    <h4>Result${truncated ? html` <span class="pill" title="The result was cut to the per-result budget (64 KiB) before it went to the model">truncated</span>` : null}</h4>
    ${result.length > FOLD
      ? html`<pre class="tool-json" aria-label="Result">${result.slice(0, FOLD)}…</pre>
          <details class="tool-more"><summary>The whole result (${result.length.toLocaleString()} characters)</summary>
            <pre class="tool-json" aria-label="Whole result">${result}</pre></details>`
      : html`<pre class="tool-json" aria-label="Result">${result}</pre>`}
  </div>`;
}
