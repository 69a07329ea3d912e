// `tavo.utils.preview`: a full-screen image viewer (zoom with the wheel or the buttons, drag
// to move, a link to save). Closes with Escape, the button or a click outside the image.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';

/** @param {{src: string, onClose: () => void}} props */
export function ImageViewer({ src, onClose }) {
  const ref = useRef(/** @type {HTMLDialogElement|null} */ (null));
  const [zoom, setZoom] = useState(1);
  const [at, setAt] = useState({ x: 0, y: 0 });
  const drag = useRef(/** @type {{x: number, y: number} | null} */ (null));
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d && d.open) d.close();
    };
  }, []);
  const z = (/** @type {number} */ f) => setZoom((v) => Math.min(8, Math.max(0.25, v * f)));
  return html`<dialog ref=${ref} class="image-viewer" aria-label="Image"
      onCancel=${(/** @type {Event} */ e) => { e.preventDefault(); onClose(); }}
      onClick=${(/** @type {MouseEvent} */ e) => { if (e.target === ref.current) onClose(); }}
      onWheel=${(/** @type {WheelEvent} */ e) => { e.preventDefault(); z(e.deltaY < 0 ? 1.15 : 1 / 1.15); }}>
    <img src=${src} alt="" draggable="false" style=${`transform: translate(${at.x}px, ${at.y}px) scale(${zoom})`}
      onPointerDown=${(/** @type {PointerEvent} */ e) => { drag.current = { x: e.clientX - at.x, y: e.clientY - at.y }; /** @type {Element} */ (e.currentTarget).setPointerCapture(e.pointerId); }}
      onPointerMove=${(/** @type {PointerEvent} */ e) => { if (drag.current) setAt({ x: e.clientX - drag.current.x, y: e.clientY - drag.current.y }); }}
      onPointerUp=${() => { drag.current = null; }} />
    <div class="viewer-tools row">
      <button type="button" class="small" onClick=${() => z(1.25)} aria-label="Zoom in">+</button>
      <button type="button" class="small" onClick=${() => z(0.8)} aria-label="Zoom out">−</button>
      <a class="button small" href=${src} download="image" target="_blank" rel="noopener noreferrer">Save</a>
      <button type="button" class="small" onClick=${onClose}>Close</button>
    </div>
  </dialog>`;
}
