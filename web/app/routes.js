// Addresses → routes, with no dependencies: the page's first module (preload.js) reads the
// route before anything else has loaded, to start fetching the screen it will draw.

/**
 * @typedef {{name: 'library'} | {name: 'character', id: number} | {name: 'chat', id: number}
 *   | {name: 'chats'} | {name: 'settings'} | {name: 'notfound', path: string}
 *   | {name: 'characterEdit', id: number} | {name: 'preset', id: number} | {name: 'lorebook', id: number}
 *   | {name: 'regex', id: number} | {name: 'prompt', id: number} | {name: 'themes'}
 *   | {name: 'assets', kind: 'preset'|'lorebook'|'regex'} | {name: 'plugins'} | {name: 'plugin', id: string} | {name: 'logs'} | {name: 'users'}} Route
 */

/** @param {string} path @returns {Route} */
export function parse(path) {
  const p = path.replace(/\/+$/, '') || '/';
  let m;
  if (p === '/' || p === '/characters') return { name: 'library' };
  if ((m = /^\/characters\/(\d+)$/.exec(p))) return { name: 'character', id: Number(m[1]) };
  if ((m = /^\/chats\/(\d+)$/.exec(p))) return { name: 'chat', id: Number(m[1]) };
  if (p === '/chats') return { name: 'chats' };
  if (p === '/settings') return { name: 'settings' };
  // Plugins (issue 20): the list, and one plugin's settings page. Plugin ids have dots, and an
  // address whose last segment has one is a file to the server, so the page ends in /settings.
  if (p === '/settings/plugins') return { name: 'plugins' };
  // Settings › Storage › Logs: the tool-call audit log.
  if (p === '/settings/logs') return { name: 'logs' };
  // A server with accounts: its admin's users screen.
  if (p === '/settings/users') return { name: 'users' };
  if ((m = /^\/settings\/plugins\/([^/]+)(?:\/settings)?$/.exec(p))) return { name: 'plugin', id: decodeURIComponent(m[1]) };
  // The workbench (issue 16): editors, the prompt inspector, themes.
  if ((m = /^\/characters\/(\d+)\/edit$/.exec(p))) return { name: 'characterEdit', id: Number(m[1]) };
  if ((m = /^\/(presets|lorebooks|regex)\/(\d+)$/.exec(p))) {
    return { name: m[1] === 'presets' ? 'preset' : m[1] === 'lorebooks' ? 'lorebook' : 'regex', id: Number(m[2]) };
  }
  if ((m = /^\/(presets|lorebooks|regex)$/.exec(p))) return { name: 'assets', kind: m[1] === 'presets' ? 'preset' : m[1] === 'lorebooks' ? 'lorebook' : 'regex' };
  if ((m = /^\/chats\/(\d+)\/prompt$/.exec(p))) return { name: 'prompt', id: Number(m[1]) };
  if (p === '/themes') return { name: 'themes' };
  return { name: 'notfound', path: p };
}
