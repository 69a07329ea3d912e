// A message shown as sanitised HTML + CSS (advanced rendering without a frame). The HTML is
// already sanitised (bubble/detect.js: no scripts, handlers, forms or frames); it lives in a
// shadow root so its `<style>` rules reach only this bubble, and the host is painted inside a
// clipped, contained box (`contain: paint`), so even `position: fixed` stays in the bubble
// instead of covering the app.
import { useLayoutEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';

const BASE = '<style>:host{display:block}img,video{max-width:100%;height:auto}pre{white-space:pre-wrap}</style>';

/** @param {{html: string}} props */
export function BubbleHtml({ html: content }) {
  const ref = useRef(/** @type {HTMLDivElement|null} */ (null));
  useLayoutEffect(() => {
    const host = ref.current;
    if (!host) return;
    const root = host.shadowRoot || host.attachShadow({ mode: 'open' });
    root.innerHTML = BASE + content;
  }, [content]);
  return html`<div class="bubble-html-box"><div class="bubble-html" ref=${ref}></div></div>`;
}
