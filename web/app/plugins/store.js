// Plugins (issue 20, Tavo §6): the state of the Settings → Plugins screens and the runtime
// list of the chat screen, as signals, with one action per HTTP call. Packages are parsed,
// validated, stored and resolved (locale, defaults) by the server; the page only shows what
// it answers.

import { signal } from '@preact/signals';
import { get, put, del, ApiError, postBytes } from '../api.js';
import { toast, errorText, libraryListeners } from '../store.js';

/**
 * @typedef {{id: string, name: string, version: string, specVersion: number, enabled: boolean, author?: string,
 *   description?: string, hasCover: boolean, permissions: string[], tags: string[], installedAt?: string, updatedAt?: string}} PluginSummary
 * @typedef {{type: string, key?: string, label?: string, text?: string, icon?: string, default?: any,
 *   options?: (string | {value: any, label: string})[], min?: number, max?: number, step?: number}} SettingElement
 * @typedef {{defaultLocale: string, requestedLocale: string, locale: string, supportedLocales: string[], catalog: Record<string, string>}} PluginI18n
 * @typedef {PluginSummary & {manifest?: any, entry: string|null,
 *   contributes: {inputActions: {id: string, label: string, icon?: string}[], sidebar: {id: string, label: string}[],
 *     htmlFragments: {id: string, src: string, mount: string}[], settings: {schema: SettingElement[]}},
 *   config: Record<string, any>, overrides: Record<string, any>, i18n: PluginI18n | null, files?: string[]}} PluginDetail
 * @typedef {{file: File, plugin: PluginSummary, warnings: string[], replaces?: {version: string}}} PendingInstall
 */

/** The locale plugins are resolved for: the browser's (Tavo gives plugins the raw device locale). */
export const pluginLocale = () => (typeof navigator !== 'undefined' && navigator.language) || 'en';

/** The installed plugins as the list screen shows them (null while loading). @type {import('@preact/signals').Signal<PluginSummary[] | null>} */
export const plugins = signal(null);
/** The search box's text (the server searches name, id, author, description and version). */
export const pluginQuery = signal('');
/** A package checked with `dryRun` and waiting for the user's answer to the risk warning. @type {import('@preact/signals').Signal<PendingInstall | null>} */
export const pendingInstall = signal(null);
/** The last refusal of a package, in the server's words (file and field). @type {import('@preact/signals').Signal<string | null>} */
export const installError = signal(null);
export const installing = signal(false);
/** The plugin whose settings page is open. @type {import('@preact/signals').Signal<PluginDetail | null>} */
export const pluginDetail = signal(null);
export const pluginDetailError = signal(/** @type {string|null} */ (null));

let listSeq = 0;
export async function loadPlugins() {
  const seq = ++listSeq;
  const q = new URLSearchParams({ locale: pluginLocale() });
  if (pluginQuery.value.trim()) q.set('q', pluginQuery.value.trim());
  try {
    const list = await get(`/api/plugins?${q}`);
    if (seq === listSeq) plugins.value = list;
  } catch (e) {
    toast(errorText(e), 'error');
    if (plugins.value === null) plugins.value = [];
  }
}

/** @param {string} text */
export function searchPlugins(text) {
  pluginQuery.value = text;
  loadPlugins();
}

/** Checks a package without installing it: the risk warning shows what it would install. @param {File} file */
export async function checkPackage(file) {
  installError.value = null;
  installing.value = true;
  try {
    const answer = await postBytes(`/api/plugins?dryRun=true`, file, file.name);
    pendingInstall.value = { file, plugin: answer.plugin, warnings: answer.warnings || [], replaces: answer.replaces };
  } catch (e) {
    installError.value = errorText(e);
  } finally {
    installing.value = false;
  }
}

/** The user accepted the risk warning: install for real. */
export async function confirmInstall() {
  const p = pendingInstall.value;
  if (!p) return;
  pendingInstall.value = null;
  installing.value = true;
  try {
    const answer = await postBytes(`/api/plugins?dryRun=false`, p.file, p.file.name);
    toast(`Installed ${answer.plugin.name} ${answer.plugin.version}`, 'ok');
    for (const w of answer.warnings || []) toast(w, 'info');
    await loadPlugins();
    pluginsChanged();
  } catch (e) {
    installError.value = errorText(e);
  } finally {
    installing.value = false;
  }
}

export function cancelInstall() {
  pendingInstall.value = null;
}

/** @param {string} id @param {boolean} enabled */
export async function setPluginEnabled(id, enabled) {
  const row = await put(`/api/plugins/${encodeURIComponent(id)}/enabled`, { enabled });
  if (plugins.value) plugins.value = plugins.value.map((p) => (p.id === id ? { ...p, ...row } : p));
  if (pluginDetail.value && pluginDetail.value.id === id) pluginDetail.value = { ...pluginDetail.value, enabled: row.enabled };
  pluginsChanged();
}

/** @param {string} id */
export async function uninstallPlugin(id) {
  await del(`/api/plugins/${encodeURIComponent(id)}`);
  if (plugins.value) plugins.value = plugins.value.filter((p) => p.id !== id);
  pluginsChanged();
}

/** @param {string} id */
export async function loadPluginDetail(id) {
  pluginDetailError.value = null;
  if (pluginDetail.value && pluginDetail.value.id !== id) pluginDetail.value = null;
  try {
    pluginDetail.value = await get(`/api/plugins/${encodeURIComponent(id)}?locale=${encodeURIComponent(pluginLocale())}`);
  } catch (e) {
    pluginDetailError.value = e instanceof ApiError && e.status === 404 ? `No plugin ${id} is installed.` : errorText(e);
  }
}

/** Saves one field (the server checks the value against the schema). @param {string} id @param {string} key @param {any} value */
export async function savePluginConfig(id, key, value) {
  const answer = await put(`/api/plugins/${encodeURIComponent(id)}/config`, { key, value });
  applyConfig(id, answer);
}

/** Deletes the saved values (one key, or all): the defaults apply again. @param {string} id @param {string} [key] */
export async function resetPluginConfig(id, key) {
  const answer = await del(`/api/plugins/${encodeURIComponent(id)}/config${key ? `?key=${encodeURIComponent(key)}` : ''}`);
  applyConfig(id, answer);
}

/** @param {string} id @param {{config: Record<string, any>, overrides: Record<string, any>}} answer */
function applyConfig(id, answer) {
  const d = pluginDetail.value;
  if (d && d.id === id && answer) pluginDetail.value = { ...d, config: answer.config, overrides: answer.overrides };
  pluginsChanged();
}

// ---- the chat screen's plugins ------------------------------------------------------------

/** The enabled plugins with their contributions, config and i18n (`GET /api/plugins/runtime`). @type {import('@preact/signals').Signal<PluginDetail[]>} */
export const runtimePlugins = signal(/** @type {PluginDetail[]} */ ([]));
/** Bumped whenever this page changed a plugin (install, enable, config): the chat re-reads its list. */
export const pluginsTick = signal(0);

export function pluginsChanged() {
  pluginsTick.value++;
}

/** Bumped when the browser's language changed: the plugin screens resolve their texts again. */
export const pluginLocaleTick = signal(0);

// Plugins changed elsewhere (another tab, the CLI) or the browser's language changed (the
// chat's runtime list is read again, so entries and fragments get the new `tavo.plugin.i18n`
// and their onChange handlers run; the list and settings screens read theirs again).
libraryListeners.add((d) => {
  if (d && d.kind === 'plugin') pluginsChanged();
});
if (typeof addEventListener === 'function') {
  addEventListener('languagechange', () => {
    pluginLocaleTick.value++;
    pluginsChanged();
  });
}

let runtimeSeq = 0;
export async function loadRuntimePlugins() {
  const seq = ++runtimeSeq;
  try {
    const list = await get(`/api/plugins/runtime?locale=${encodeURIComponent(pluginLocale())}`);
    if (seq === runtimeSeq) runtimePlugins.value = Array.isArray(list) ? list : [];
  } catch {
    // A server without plugins (or an error): the chat works without them.
    if (seq === runtimeSeq) runtimePlugins.value = [];
  }
}

/** A plugin's settings page in the app. @param {string} id */
export const pluginPage = (id) => `/settings/plugins/${encodeURIComponent(id)}/settings`;

/** A package file's address (icons, covers). @param {string} id @param {string} path */
export const pluginFile = (id, path) => `/api/plugins/${encodeURIComponent(id)}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
