// The chat's side panel: its members (a group chat is a chat with several: its reply mode, each
// member's mute switch and "ask to reply"), and what it is
// bound to — persona, preset, lorebooks, regex groups. Every change is one call of
// `tavo_chat_update` naming only the field it changes (the server checks every id in one
// transaction); the panel then re-reads the chat. Clone copies the chat with its messages.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link, navigate } from '../router.js';
import { get, del } from '../api.js';
import { chatView, updateChat, cloneChat, toast, errorText, libraryTick, setMemberMuted, startReply, currentReply } from '../store.js';
import { Avatar } from './Avatar.js';
import { PluginSidebar } from './PluginSidebar.js';
import { ScriptConsole } from './ScriptConsole.js';

/** @typedef {{id: number, name: string}} Row */

/** Group reply modes (Tavo §12), as the engine names them. */
export const REPLY_MODES = [
  ['natural', 'Natural', 'The members your message names answer, in that order; else one of them.'],
  ['all', 'Everyone', 'Every unmuted member answers, in member order.'],
  ['designated', 'Designated', 'Only the members you address as @name answer.'],
  ['contextual', 'Contextual', 'The model chooses who speaks (the speaker prompt in Settings).'],
];

/** @param {{onClose: () => void}} props */
export function ChatPanel({ onClose }) {
  const chat = /** @type {any} */ (chatView.chat.value);
  const [lists, setLists] = useState(/** @type {Record<string, Row[]> | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [add, setAdd] = useState('');
  useEffect(() => {
    Promise.all(['character', 'persona', 'preset', 'lorebook', 'regex'].map((k) => get('/api/library/' + k).catch(() => [])))
      .then(([character, persona, preset, lorebook, regex]) => setLists({ character, persona, preset, lorebook, regex }));
  }, [libraryTick.value]);
  useEffect(() => {
    /** @param {KeyboardEvent} e */
    const esc = (e) => { if (e.key === 'Escape') onClose(); };
    addEventListener('keydown', esc);
    return () => removeEventListener('keydown', esc);
  }, []);
  if (!chat) return null;
  /** @param {Record<string, any>} change */
  const save = async (change) => {
    setBusy(true);
    try {
      await updateChat(change);
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  /** @param {any[]} list @returns {number[]} */
  const ids = (list) => (list || []).map((x) => x.id);
  /** @param {'lorebooks'|'regexes'} field @param {number} id @param {boolean} on */
  const toggle = (field, id, on) => {
    const now = ids(chat[field]);
    save({ [field]: on ? [...now, id] : now.filter((x) => x !== id) });
  };
  const members = /** @type {Row[]} */ (chat.characters || []);
  const group = members.length > 1;
  const muted = /** @type {number[]} */ (chat.mutedCharacterIds || []);
  const live = !!currentReply.value && currentReply.value.status.value !== 'finished' && !currentReply.value.error.value;
  /** @param {() => Promise<any>} f */
  const run = async (f) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  const others = (lists?.character || []).filter((c) => !members.some((m) => m.id === c.id));
  const clone = async () => {
    setBusy(true);
    try {
      const id = await cloneChat();
      toast('Chat cloned', 'ok');
      navigate('/chats/' + id);
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  /** @param {string} label @param {'persona'|'preset'} field @param {Row[]} rows @param {string} none */
  const picker = (label, field, rows, none) => html`<label class="field">${label}
    <select disabled=${busy} value=${chat[field] ? String(chat[field].id) : ''}
      onChange=${(/** @type {any} */ e) => save({ [field]: e.currentTarget.value ? Number(e.currentTarget.value) : null })}>
      <option value="">${none}</option>
      ${rows.map((r) => html`<option key=${r.id} value=${String(r.id)}>${r.name}</option>`)}
    </select></label>`;
  /** @param {string} legend @param {'lorebooks'|'regexes'} field @param {Row[]} rows @param {string} empty */
  const checks = (legend, field, rows, empty) => html`<fieldset>
    <legend>${legend}</legend>
    ${rows.length
      ? rows.map((r) => html`<label key=${r.id} class="check"><input type="checkbox" disabled=${busy}
          checked=${ids(chat[field]).includes(r.id)} onChange=${(/** @type {any} */ e) => toggle(field, r.id, e.currentTarget.checked)} /> ${r.name}</label>`)
      : html`<p class="muted">${empty}</p>`}
  </fieldset>`;
  return html`<aside class="chat-panel" aria-label="Chat settings" aria-busy=${busy}>
    <header class="row"><h2 class="grow">Chat settings</h2>
      <button type="button" class="icon" aria-label="Close chat settings" onClick=${onClose}>×</button></header>
    ${!lists
      ? html`<p class="muted" aria-busy="true">Loading…</p>`
      : html`
        <section aria-label="Members">
          <h3>${group ? 'Group members' : 'Character'}</h3>
          ${group
            ? html`<label class="field">Reply mode
                <select disabled=${busy} value=${chat.replyMode || 'natural'}
                  onChange=${(/** @type {any} */ e) => { const replyMode = e.currentTarget.value; chatView.chat.value = { ...chat, replyMode }; save({ replyMode }); }}>
                  ${REPLY_MODES.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}
                </select></label>
                <p class="muted mode-about">${(REPLY_MODES.find(([v]) => v === (chat.replyMode || 'natural')) || REPLY_MODES[0])[2]} Muted members answer only when chosen.</p>`
            : null}
          <ul class="member-list">${members.map(
            (m, i) => html`<li key=${m.id} class=${muted.includes(m.id) ? 'muted-member' : ''}>
              <${Avatar} src=${`/api/characters/${m.id}/avatar`} name=${m.name} />
              <a class="grow" href=${'/characters/' + m.id} onClick=${link}>${m.name}</a>
              ${group && muted.includes(m.id) ? html`<span class="pill off" title="Never answers unless chosen">muted</span>` : null}
              ${group
                ? html`<span class="member-actions"><button type="button" class="small" disabled=${busy || live} aria-label=${'Ask ' + m.name + ' to reply'}
                      title="This member answers now, muted or not" onClick=${() => run(() => startReply('normal', undefined, { speaker: m.id }))}>Reply</button>
                    <button type="button" class="small" disabled=${busy} aria-label=${(muted.includes(m.id) ? 'Unmute ' : 'Mute ') + m.name}
                      onClick=${() => run(() => setMemberMuted(m.id, !muted.includes(m.id)))}>${muted.includes(m.id) ? 'Unmute' : 'Mute'}</button>
                    <button type="button" class="small" disabled=${busy || i === 0} aria-label=${'Move ' + m.name + ' up'}
                      onClick=${() => { const order = ids(members); [order[i - 1], order[i]] = [order[i], order[i - 1]]; save({ characters: order }); }}>↑</button>
                    <button type="button" class="small danger" disabled=${busy} aria-label=${'Remove ' + m.name}
                      onClick=${() => save({ characters: ids(members).filter((x) => x !== m.id) })}>Remove</button></span>`
                : null}
            </li>`,
          )}</ul>
          ${others.length
            ? html`<form class="row" onSubmit=${(/** @type {Event} */ e) => { e.preventDefault(); if (add) save({ characters: [...ids(members), Number(add)] }).then(() => setAdd('')); }}>
                <select class="grow" aria-label="Add a member" value=${add} onChange=${(/** @type {any} */ e) => setAdd(e.currentTarget.value)}>
                  <option value="">Add a member…</option>
                  ${others.map((c) => html`<option key=${c.id} value=${String(c.id)}>${c.name}</option>`)}
                </select>
                <button type="submit" class="small" disabled=${busy || !add}>Add</button></form>`
            : null}
        </section>
        ${picker('Persona', 'persona', lists.persona, 'The default persona')}
        ${picker('Preset', 'preset', lists.preset, 'The built-in preset')}
        ${checks('Lorebooks', 'lorebooks', lists.lorebook, 'No lorebooks in the library.')}
        ${checks('Regex groups', 'regexes', lists.regex, 'No regex groups in the library.')}
        <fieldset><legend>Display</legend>
          <label class="check"><input type="checkbox" disabled=${busy} checked=${chat.advancedRendering !== false}
            onChange=${(/** @type {any} */ e) => save({ advancedRendering: e.currentTarget.checked })} /> Advanced rendering (messages as HTML and CSS; scripts follow the JavaScript setting)</label>
        </fieldset>
        <${RememberedApprovals} chatId=${chat.id} />
        <${ScriptConsole} chatId=${chat.id} />
        <p><button type="button" disabled=${busy} onClick=${clone}>Clone chat</button></p>
        <${PluginSidebar} />`}
  </aside>`;
}

const CHOICE = /** @type {Record<string, string>} */ ({ allow: 'always allowed', deny: 'always denied', ask: 'asks each time' });

/** The tool choices remembered for this chat in the confirmation dialog, each one forgettable. @param {{chatId: number}} props */
function RememberedApprovals({ chatId }) {
  const [tools, setTools] = useState(/** @type {Record<string, string> | null} */ (null));
  const reply = currentReply.value;
  const pending = reply ? reply.pending.value : null;
  useEffect(() => {
    get(`/api/chats/${chatId}/approvals`).then((r) => setTools(r.tools), () => setTools({}));
  }, [chatId, pending]);
  const names = Object.keys(tools || {});
  return html`<fieldset><legend>Tool approvals in this chat</legend>
    ${tools === null
      ? html`<p class="muted">Loading…</p>`
      : names.length === 0
        ? html`<p class="muted">None remembered: tools that ask will ask.</p>`
        : html`<ul class="approval-list">${names.map((t) => html`<li key=${t} class="row">
            <code class="grow">${t}</code> <span class="muted">${CHOICE[/** @type {any} */ (tools)[t]] || tools[t]}</span>
            <button type="button" class="small" aria-label=${'Forget the choice for ' + t}
              onClick=${() => del(`/api/chats/${chatId}/approvals/${encodeURIComponent(t)}`).then((r) => setTools(r.tools), (e) => toast(errorText(e), 'error'))}>Forget</button></li>`)}</ul>`}
  </fieldset>`;
}
