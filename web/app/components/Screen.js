// The screen of a route whose module loads on demand (screens.js): drawn at once when the
// module is already here, else "Loading…" until it is, or the error with a way to retry.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { loadScreen, readyScreen } from '../screens.js';

/** @param {{name: string, props?: Record<string, any>}} props */
export function Screen({ name, props = {} }) {
  const component = readyScreen(name);
  const [, setLoaded] = useState(0);
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (component) return;
    let live = true;
    setError(null);
    loadScreen(name).then(
      () => live && setLoaded((n) => n + 1),
      (/** @type {unknown} */ e) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [name, attempt]);
  if (component) return h(component, props);
  if (error) {
    return html`<section class="screen"><p class="error" role="alert">This screen could not be loaded: ${error}</p>
      <p><button type="button" onClick=${() => setAttempt((n) => n + 1)}>Try again</button></p></section>`;
  }
  return html`<section class="screen"><p class="muted" aria-busy="true">Loading…</p></section>`;
}
