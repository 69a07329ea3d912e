// A notice the user acknowledges (OK): a title and a text.
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';

/** @param {{title: string, text: string, onClose: () => void}} props */
export function NoticeDialog({ title, text, onClose }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d && d.open) d.close();
    };
  }, []);
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="notice-title" aria-describedby="notice-text"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); onClose(); }}>
    <h2 id="notice-title">${title}</h2>
    <p id="notice-text">${text}</p>
    <div class="row end"><button type="button" class="primary" onClick=${onClose}>OK</button></div>
  </dialog>`;
}
