// Avatar upload with a crop: the chosen image is cut to the card shape (2:3) in the page — the
// part kept is moved with two sliders — and sent as a PNG (`PUT /api/characters/{id}/avatar`,
// or `target`: a persona's `PUT /api/personas/{id}/avatar`).
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { putBytes } from '../api.js';
import { toast, errorText } from '../store.js';

const W = 400;
const H = 600;

/** @param {{id: number, onDone: () => void, target?: string}} props */
export function AvatarCrop({ id, onDone, target }) {
  const [image, setImage] = useState(/** @type {HTMLImageElement|null} */ (null));
  const [x, setX] = useState(50);
  const [y, setY] = useState(50);
  const [zoom, setZoom] = useState(100);
  const canvas = useRef(/** @type {HTMLCanvasElement|null} */ (null));
  useEffect(() => {
    const c = canvas.current;
    if (!c || !image) return;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    // The largest 2:3 window of the image, shrunk by the zoom, placed by the sliders.
    const base = Math.min(image.width / 2, image.height / 3);
    const sw = (2 * base * 100) / zoom;
    const sh = (3 * base * 100) / zoom;
    const sx = ((image.width - sw) * x) / 100;
    const sy = ((image.height - sh) * y) / 100;
    ctx.clearRect(0, 0, W, H);
    ctx.drawImage(image, sx, sy, sw, sh, 0, 0, W, H);
  }, [image, x, y, zoom]);
  /** @param {any} e */
  const choose = (e) => {
    const file = e.currentTarget.files[0];
    if (!file) return;
    const img = new Image();
    img.onload = () => setImage(img);
    img.onerror = () => toast(`${file.name} is not an image this browser can read`, 'error');
    img.src = URL.createObjectURL(file);
  };
  const upload = () => {
    canvas.current?.toBlob(async (blob) => {
      if (!blob) return;
      try {
        await putBytes(target || `/api/characters/${id}/avatar`, blob);
        toast('Avatar saved', 'ok');
        setImage(null);
        onDone();
      } catch (err) {
        toast(errorText(err), 'error');
      }
    }, 'image/png');
  };
  /** @param {string} label @param {number} v @param {(v: number) => void} set @param {number} min @param {number} max */
  const slider = (label, v, set, min, max) => html`<label class="field narrow">${label}
    <input type="range" min=${min} max=${max} value=${v} onInput=${(/** @type {any} */ e) => set(Number(e.currentTarget.value))} /></label>`;
  return html`<fieldset class="avatar-crop" role="group" aria-label="Avatar">
    <legend>Avatar</legend>
    <label class="field">Upload an image <input type="file" accept="image/png,image/jpeg,image/webp,image/gif" onChange=${choose} /></label>
    ${image
      ? html`<div class="row wrap">
          <canvas ref=${canvas} width=${W} height=${H} class="crop-preview" role="img" aria-label="Cropped avatar"></canvas>
          <div class="column">
            ${slider('Horizontal', x, setX, 0, 100)} ${slider('Vertical', y, setY, 0, 100)} ${slider('Zoom', zoom, setZoom, 100, 400)}
            <button type="button" class="primary" onClick=${upload}>Use this avatar</button>
            <button type="button" onClick=${() => setImage(null)}>Cancel</button>
          </div>
        </div>`
      : null}
  </fieldset>`;
}
