// Tapping a plugin's input action or sidebar row (Tavo §6.2, §6.7): with advanced rendering
// off the handler does not run and a dialog says how to turn it on; otherwise the plugin's
// handler for `inputActions:<id>` / `sidebar:<id>` runs in its entry frame — "missing
// handler" when it registered none, "plugin action failure" when it throws.
import { chatView, toast, askBubble } from '../store.js';
import { dispatchAction, onActionFailure, entries } from './hooks.js';

/** @param {any} chat */
export const advancedRendering = (chat) => !!chat && chat.advancedRendering !== false;

onActionFailure((e, key) => toast(`${e.name}: plugin action failure (${key})`, 'error'));

/**
 * @param {import('./store.js').PluginDetail} p @param {'inputActions'|'sidebar'} kind @param {{id: string, label: string}} action
 */
export async function runAction(p, kind, action) {
  if (!advancedRendering(chatView.chat.value)) {
    await askBubble({
      kind: 'notice',
      title: 'Turn on Advanced Rendering',
      text: `“${action.label}” comes from the plugin ${p.name}. Plugins run only in chats with Advanced Rendering on: open Chat settings and turn on Advanced rendering under Display, then try again.`,
    });
    return;
  }
  const key = `${kind}:${action.id}`;
  if (!p.entry) {
    toast(`${p.name}: missing handler for ${action.label}`, 'error');
    return;
  }
  // The entry may still be starting (the chat just opened): wait for it a little.
  for (let i = 0; i < 50; i++) {
    const e = entries.get(p.id);
    if (e && e.ready) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const result = await dispatchAction(p.id, key);
  if (result === 'missing') toast(`${p.name}: missing handler for ${action.label}`, 'error');
  else if (result === 'failed') toast(`${p.name}: plugin action failure (${action.label})`, 'error');
  else if (result === 'not-running') toast(`${p.name} is not running in this chat`, 'error');
}
