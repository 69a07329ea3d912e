// The image a message carries, where SillyTavern keeps it (`extra.image`, titled by
// `extra.title`): an image `/imagine` generated (a chat file, `files/chat/NAME`), a global file,
// or a data URL. Other addresses (a SillyTavern server's `/user/images/…`) are not reachable
// here and are left out. A click opens the viewer.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { chatView } from '../store.js';
import { ImageViewer } from './ImageViewer.js';
import { fileUrl } from '../files.js';

/** The address the app loads an image reference from, or null.
 * @param {unknown} ref @param {number|null|undefined} chatId */
export function imageSrc(ref, chatId) {
  if (typeof ref !== 'string') return null;
  if (/^data:image\/[a-z+.-]+;base64,/i.test(ref)) return ref;
  return fileUrl(ref, chatId);
}

/** @param {{message: any}} props */
export function MessageImage({ message: m }) {
  const [open, setOpen] = useState(false);
  const extra = m && m.extra;
  const src = extra ? imageSrc(extra.image, chatView.id.value) : null;
  if (!src) return null;
  const title = typeof extra.title === 'string' ? extra.title : '';
  return html`<figure class="message-image">
    <button type="button" class="image-button" aria-label=${'Open image' + (title ? `: ${title}` : '')} onClick=${() => setOpen(true)}>
      <img src=${src} alt=${title || 'Generated image'} loading="lazy" /></button>
    ${title ? html`<figcaption class="muted small">${title}</figcaption>` : null}
    ${open ? html`<${ImageViewer} src=${src} onClose=${() => setOpen(false)} />` : null}
  </figure>`;
}
