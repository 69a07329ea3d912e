// Every screen has its own address: the route is a signal derived from `location`, so
// reload, back/forward and bookmarks all work.

import { signal } from '@preact/signals';
import { parse } from './routes.js';

/** @typedef {import('./routes.js').Route} Route */

export { parse };

export const route = signal(parse(location.pathname));

/** @param {string} path @param {{replace?: boolean}} [opts] */
export function navigate(path, opts = {}) {
  if (path === location.pathname) return;
  if (opts.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  route.value = parse(location.pathname);
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  route.value = parse(location.pathname);
});

/** Same-origin links navigate in the app: `<a href="/chats/3" onClick=${link}>`. @param {MouseEvent} e */
export function link(e) {
  const a = /** @type {HTMLElement} */ (e.currentTarget);
  const href = a.getAttribute('href');
  if (!href || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(href);
}
