// The package files the chat's plugins need as text (entry code, fragment HTML), read once
// per installed version.
import { get } from '../api.js';
import { pluginFile } from './store.js';

/** @type {Map<string, Promise<string>>} */
const cache = new Map();

/** @param {{id: string, version: string, updatedAt?: string}} p @param {string} path */
export function pluginText(p, path) {
  const key = `${p.id}\n${p.version}\n${p.updatedAt || ''}\n${path}`;
  let t = cache.get(key);
  if (!t) {
    t = get(pluginFile(p.id, path)).then((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    t.catch(() => cache.delete(key));
    cache.set(key, t);
  }
  return t;
}

/** What a plugin frame's `tavo.plugin` is built from. @param {import('./store.js').PluginDetail} p @param {string|null} fragmentId */
export function pluginInit(p, fragmentId) {
  return {
    pluginId: p.id,
    fragmentId,
    config: p.config || {},
    i18n: p.specVersion >= 2 && p.i18n ? p.i18n : null,
    inputActions: (p.contributes?.inputActions || []).map((a) => a.id),
    sidebar: (p.contributes?.sidebar || []).map((a) => a.id),
  };
}
