// Each screen's module, fetched when its route is first drawn rather than with the page: the
// library needs 23 of the app's 90-odd modules, a chat most of the rest. Loading is started by
// preload.js for the address the page opened at (in parallel with main.js's own imports), by
// <Screen> for any other route, and in the background once the first screen is on view, so the
// next click rarely waits. No dependencies, so preload.js can start before anything else.

/** @typedef {{load: () => Promise<any>, name: string}} ScreenModule */

/** Route name → the module that draws it and the component it exports. @type {Record<string, ScreenModule>} */
const SCREENS = {
  library: { load: () => import('./components/Library.js'), name: 'Library' },
  character: { load: () => import('./components/CharacterPage.js'), name: 'CharacterPage' },
  chat: { load: () => import('./components/ChatView.js'), name: 'ChatView' },
  chats: { load: () => import('./components/ChatList.js'), name: 'ChatList' },
  settings: { load: () => import('./components/Settings.js'), name: 'Settings' },
  plugins: { load: () => import('./components/PluginList.js'), name: 'PluginList' },
  plugin: { load: () => import('./components/PluginSettings.js'), name: 'PluginSettings' },
  logs: { load: () => import('./components/AuditLog.js'), name: 'AuditLog' },
  users: { load: () => import('./components/Users.js'), name: 'Users' },
  characterEdit: { load: () => import('./components/CharacterEditor.js'), name: 'CharacterEditor' },
  preset: { load: () => import('./components/PresetEditor.js'), name: 'PresetEditor' },
  lorebook: { load: () => import('./components/LorebookEditor.js'), name: 'LorebookEditor' },
  regex: { load: () => import('./components/RegexEditor.js'), name: 'RegexEditor' },
  prompt: { load: () => import('./components/PromptInspector.js'), name: 'PromptInspector' },
  assets: { load: () => import('./components/AssetList.js'), name: 'AssetList' },
  themes: { load: () => import('./components/Themes.js'), name: 'Themes' },
};

/** @type {Map<string, Promise<any>>} */
const pending = new Map();
/** @type {Map<string, any>} */
const ready = new Map();

/** Whether `name` is a route drawn by a screen module. @param {string} name */
export function isScreen(name) {
  return Object.hasOwn(SCREENS, name);
}

/**
 * Starts (once) fetching the screen of route `name`; resolves to its component. A failed load
 * is forgotten, so the next attempt fetches again (a server restarted mid-navigation).
 * @param {string} name
 * @returns {Promise<any>}
 */
export function loadScreen(name) {
  const screen = SCREENS[name];
  if (!screen) return Promise.reject(new Error(`no screen draws the route ${name}`));
  let p = pending.get(name);
  if (!p) {
    p = screen.load().then(
      (module) => {
        const component = module[screen.name];
        ready.set(name, component);
        return component;
      },
      (error) => {
        pending.delete(name);
        throw error;
      },
    );
    pending.set(name, p);
  }
  return p;
}

/** The component of route `name` if its module has loaded, else undefined. @param {string} name */
export function readyScreen(name) {
  return ready.get(name);
}

/** Routes fetched in the background after the first screen, most likely next first. */
const LIKELY_NEXT = ['chat', 'character', 'chats', 'library', 'settings'];

/**
 * Fetches the likely next screens in the background, one at a time while the page is idle,
 * starting half a second after the screen `first` has loaded (so they never compete with it).
 * @param {string} first
 */
export function prefetchScreens(first) {
  const idle = /** @type {(f: () => void) => void} */ (
    typeof requestIdleCallback === 'function' ? (f) => requestIdleCallback(f, { timeout: 2000 }) : (f) => setTimeout(f, 50)
  );
  const next = (/** @type {number} */ i) => {
    if (i >= LIKELY_NEXT.length) return;
    idle(() => {
      loadScreen(LIKELY_NEXT[i]).then(
        () => next(i + 1),
        () => {},
      );
    });
  };
  loadScreen(first).then(
    () => setTimeout(() => next(0), 500),
    () => {},
  );
}
