// A chat (/chats/{id}): its messages, the live reply, the composer, and what the reply waits
// for (a confirmation or a question).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { del } from '../api.js';
import { chatView, openChat, leaveChat, currentReply, renameChat, toast, errorText } from '../store.js';
import { MessageList } from './MessageList.js';
import { Composer } from './Composer.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { AskUserForm } from './AskUserForm.js';
import { ChatPanel } from './ChatPanel.js';
import { PluginHost } from './PluginHost.js';
import { PluginMount } from './PluginMount.js';
import { TtsPlayer } from './TtsPlayer.js';
import { ChatBackground } from './ChatBackground.js';
import { loadRuntimePlugins, pluginsTick } from '../plugins/store.js';

/** @param {{id: number}} props */
export function ChatView({ id }) {
  const [panel, setPanel] = useState(false);
  useEffect(() => {
    openChat(id);
    return () => leaveChat();
  }, [id]);
  useEffect(() => {
    loadRuntimePlugins();
  }, [id, pluginsTick.value]);
  const chat = chatView.chat.value;
  const error = chatView.error.value;
  const reply = currentReply.value;
  const pending = reply ? reply.pending.value : null;
  if (error)
    return html`<section class="screen"><p class="error" role="alert">${error}</p>
      <p><a href="/chats" onClick=${link}>All chats</a></p></section>`;
  // Plugins run only when the chat has advanced rendering on (Tavo §6.2).
  const plugins = !!chat && chat.id === id && /** @type {any} */ (chat).advancedRendering !== false;
  return html`<section class="chat" aria-label="Chat">
    <${ChatBackground} />
    <${ChatHeader} panel=${panel} togglePanel=${() => setPanel(!panel)} />
    ${panel ? html`<${ChatPanel} onClose=${() => setPanel(false)} />` : null}
    <${PluginMount} at="/chat/body/start" />
    <${MessageList} />
    <${PluginMount} at="/chat/body/end" />
    ${plugins ? html`<${PluginHost} chatId=${id} />` : null}
    ${reply && reply.error.value ? html`<p class="reply-error error" role="alert">${reply.error.value}</p>` : null}
    ${reply && reply.warnings.value.length ? html`<p class="reply-warning muted" role="status">${reply.warnings.value.join(' · ')}</p>` : null}
    ${pending && pending.interaction === 'question' ? html`<${AskUserForm} pending=${pending} />` : null}
    <${TtsPlayer} chatId=${id} />
    <${Composer} disabled=${!chat} />
    ${pending && pending.interaction === 'confirmation' ? html`<${ConfirmDialog} pending=${pending} />` : null}
  </section>`;
}

/** @param {{panel: boolean, togglePanel: () => void}} props */
function ChatHeader({ panel, togglePanel }) {
  const chat = chatView.chat.value;
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  if (!chat) return html`<header class="chat-head"><span class="muted" aria-busy="true">Loading…</span></header>`;
  /** @param {Event} e */
  const save = async (e) => {
    e.preventDefault();
    try {
      await renameChat(name.trim());
      setEditing(false);
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  return html`<header class="chat-head">
    <${PluginMount} at="/chat/head/start" />
    ${editing
      ? html`<form class="row grow" onSubmit=${save}>
          <input class="grow" aria-label="Chat name" value=${name} onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
          <button type="submit" class="small">Save</button><button type="button" class="small" onClick=${() => setEditing(false)}>Cancel</button></form>`
      : html`<h1 class="grow">${chat.name || 'Chat ' + chat.id}</h1>
          <button type="button" class="small" onClick=${() => { setName(chat.name); setEditing(true); }}>Rename</button>`}
    <button type="button" class="small" aria-expanded=${panel} onClick=${togglePanel}>Chat settings</button>
    <details class="menu">
      <summary class="button small">Chat</summary>
      <ul>
        <li><a href=${`/chats/${chat.id}/prompt`} onClick=${link}>Inspect the next prompt</a></li>
        <li><a href=${`/api/export/chat/${chat.id}?format=jsonl`} download>Export as SillyTavern JSONL</a></li>
        <li><a href=${`/api/export/chat/${chat.id}?format=tavo`} download>Export as Tavo JSON</a></li>
        <li><button type="button" class="danger" onClick=${async () => {
          if (!confirm(`Delete the chat “${chat.name}” and its messages?`)) return;
          try {
            await del(`/api/library/chat/${chat.id}`);
            navigate(chat.characters[0] ? `/characters/${chat.characters[0].id}` : '/chats', { replace: true });
          } catch (err) {
            toast(errorText(err), 'error');
          }
        }}>Delete chat</button></li>
      </ul>
    </details>
    <span class="members">${chat.characters.map(
      (c) => html`<a key=${c.id} href=${'/characters/' + c.id} onClick=${link}>${c.name}</a>`,
    )}${chat.persona ? html` · as ${chat.persona.name}` : null}</span>
    <${PluginMount} at="/chat/head/end" />
  </header>`;
}
