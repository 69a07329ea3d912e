// A list that renders only the rows in view (plus a few): a lorebook of 10,000 entries keeps
// a few dozen rows in the DOM, so opening, searching and scrolling stay instant. Rows have one
// fixed height; the spacer gives the scroll bar the full length.
import { useState, useRef, useEffect } from 'preact/hooks';
import { html } from '../html.js';

const OVERSCAN = 6;

/**
 * `renderRow` should give each row `role="listitem"` with `aria-posinset` (index + 1) and
 * `aria-setsize` (count): assistive technology then knows the list's true length.
 * @param {{count: number, rowHeight: number, height: number, label: string,
 *   renderRow: (index: number) => any, scrollTo?: number | null}} props
 *   `scrollTo`: an index to bring into view when it changes.
 */
export function VirtualList({ count, rowHeight, height, label, renderRow, scrollTo = null }) {
  const [top, setTop] = useState(0);
  const box = useRef(/** @type {HTMLDivElement|null} */ (null));
  useEffect(() => {
    const el = box.current;
    if (!el || scrollTo == null) return;
    const y = scrollTo * rowHeight;
    if (y < el.scrollTop || y + rowHeight > el.scrollTop + height) el.scrollTop = Math.max(0, y - height / 2);
  }, [scrollTo]);
  useEffect(() => {
    // A shorter list (a search) must not leave the view past its end.
    const el = box.current;
    if (el && el.scrollTop > count * rowHeight) {
      el.scrollTop = 0;
      setTop(0);
    }
  }, [count]);
  const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
  const last = Math.min(count, Math.ceil((top + height) / rowHeight) + OVERSCAN);
  const rows = [];
  for (let i = first; i < last; i++) rows.push(renderRow(i));
  return html`<div class="virtual-list" ref=${box} style=${{ height: height + 'px' }} role="list" aria-label=${label}
      onScroll=${(/** @type {any} */ e) => setTop(e.currentTarget.scrollTop)}>
    <div style=${{ height: count * rowHeight + 'px', position: 'relative' }}>
      <div style=${{ position: 'absolute', top: first * rowHeight + 'px', left: 0, right: 0 }}>${rows}</div>
    </div>
  </div>`;
}
