// An avatar image, or the name's initial when there is none (or it fails to load).
import { useState } from 'preact/hooks';
import { html } from '../html.js';

/** @param {{src?: string|null, name: string, size?: 'small'|'large'}} props */
export function Avatar({ src, name, size = 'small' }) {
  const [failed, setFailed] = useState(false);
  const initial = (name || '?').trim().charAt(0).toUpperCase() || '?';
  if (!src || failed) return html`<span class=${'avatar initial ' + size} aria-hidden="true">${initial}</span>`;
  return html`<img class=${'avatar ' + size} src=${src} alt="" loading="lazy" decoding="async" onError=${() => setFailed(true)} />`;
}
