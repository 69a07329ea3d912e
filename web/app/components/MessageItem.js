// One message: avatar and name, the text as Markdown, reasoning (collapsed), tool-call cards,
// swipes "2/5", its translation when it has one, and its actions (copy, translate, edit, hide,
// delete).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { chatView, editMessage, deleteMessage, chooseSwipe, startReply, currentReply, toast, errorText, translateMessage } from '../store.js';
import { render } from '../markdown.js';
import { Avatar } from './Avatar.js';
import { ToolCard } from './ToolCard.js';
import { BubbleContent } from './BubbleContent.js';
import { PluginMount } from './PluginMount.js';
import { SpeakButton } from './TtsPlayer.js';
import { MessageImage } from './MessageImage.js';

/** @param {import('../store.js').Message} m */
function speaker(m) {
  const chat = chatView.chat.value;
  if (m.role === 'user') return { name: m.name || chat?.persona?.name || 'You', avatar: chat?.persona ? `/api/personas/${chat.persona.id}/avatar` : null };
  if (m.role === 'system') return { name: m.name || 'System', avatar: null };
  const c = chat?.characters.find((x) => x.id === m.characterId) || chat?.characters[0];
  return { name: m.name || c?.name || 'Assistant', avatar: c ? `/api/characters/${c.id}/avatar` : null };
}

/** @param {{message: import('../store.js').Message, isLast: boolean, parked?: boolean}} props
 *   `parked`: outside the list's window, kept mounted (hidden) for its running script. */
export function MessageItem({ message: m, isLast, parked = false }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [translating, setTranslating] = useState(false);
  const who = speaker(m);
  const busy = !!currentReply.value && currentReply.value.status.value !== 'finished' && !currentReply.value.error.value;
  /** @param {() => Promise<any>} f */
  const act = (f) => f().catch((e) => toast(errorText(e), 'error'));
  const swipes = m.swipes && m.swipes.length > 1 ? m.swipes : null;
  const index = m.swipeId ?? 0;
  const save = () =>
    act(async () => {
      await editMessage(m, { content: text });
      setEditing(false);
    });
  return html`<article class=${'message ' + m.role + (m.hidden ? ' hidden-msg' : '')} data-key=${String(m.id)} aria-label=${who.name} hidden=${parked} data-parked=${parked ? '' : undefined}>
    <${Avatar} src=${who.avatar} name=${who.name} />
    <div class="bubble">
      <header class="message-head"><span class="speaker">${who.name}</span>
        ${m.hidden ? html`<span class="pill" title="Left out of the prompt">hidden</span>` : null}
        <span class="floor muted">#${m.floor}</span></header>
      <${PluginMount} at="/messages/start" message=${m} />
      ${m.reasoning ? html`<details class="reasoning"><summary>Reasoning</summary><div class="prose" dangerouslySetInnerHTML=${{ __html: render(m.display?.reasoning ?? m.reasoning, chatView.id.value) }}></div></details>` : null}
      ${editing
        ? html`<div class="edit"><textarea aria-label="Edit message" rows="5" value=${text} onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)}
              onKeyDown=${(/** @type {KeyboardEvent} */ e) => { if (e.key === 'Escape') setEditing(false); if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save(); }}></textarea>
            <div class="row end"><button type="button" class="small" onClick=${() => setEditing(false)}>Cancel</button>
            <button type="button" class="small primary" onClick=${save}>Save</button></div></div>`
        : html`<${BubbleContent} message=${m} />`}
      <${MessageImage} message=${m} />
      ${m.translation && m.translation.text
        ? html`<section class="translation" aria-label=${`Translation (${m.translation.language})`}>
            <div class="muted small">${m.translation.language}</div>
            <div class="prose" dangerouslySetInnerHTML=${{ __html: render(m.translation.text, chatView.id.value) }}></div></section>`
        : null}
      ${m.toolCalls && m.toolCalls.length ? html`<div class="tool-cards">${m.toolCalls.map((c) => html`<${ToolCard} key=${c.callId} card=${c} chatId=${chatView.id.value} />`)}</div>` : null}
      <${PluginMount} at="/messages/end" message=${m} />
      <footer class="message-actions">
        ${swipes || (isLast && m.role === 'assistant')
          ? html`<span class="swipes">
              <button type="button" class="icon" aria-label="Previous swipe" disabled=${busy || !swipes || index === 0}
                onClick=${() => act(() => chooseSwipe(m, index - 1))}>‹</button>
              <span class="swipe-index" aria-label="Swipe">${swipes ? `${index + 1}/${swipes.length}` : '1/1'}</span>
              <button type="button" class="icon" aria-label="Next swipe" disabled=${busy || (!isLast && (!swipes || index >= swipes.length - 1))}
                onClick=${() => act(() => (swipes && index < swipes.length - 1 ? chooseSwipe(m, index + 1) : startReply('swipe')))}>›</button>
            </span>`
          : null}
        <span class="grow"></span>
        <button type="button" class="small" onClick=${() => act(() => navigator.clipboard.writeText(m.content))}>Copy</button>
        <button type="button" class="small" disabled=${translating || !m.content.trim()}
          onClick=${() => { setTranslating(true); act(() => translateMessage(m)).finally(() => setTranslating(false)); }}>${translating ? 'Translating…' : 'Translate'}</button>
        <${SpeakButton} message=${m} />
        <button type="button" class="small" disabled=${busy} onClick=${() => { setText(m.content); setEditing(true); }}>Edit</button>
        <button type="button" class="small" disabled=${busy} onClick=${() => act(() => editMessage(m, { hidden: !m.hidden }))}>${m.hidden ? 'Unhide' : 'Hide'}</button>
        <button type="button" class="small danger" disabled=${busy} onClick=${() => { if (confirm('Delete this message?')) act(() => deleteMessage(m)); }}>Delete</button>
      </footer>
    </div>
  </article>`;
}

/** The message a live reply writes, from its event stream.
 * @param {{message: import('../store.js').Message|null, reply: import('../store.js').ReplyState}} props */
export function StreamingItem({ message: m, reply }) {
  const chat = chatView.chat.value;
  // In a group reply the `speaker` event says which member is answering now.
  const who = reply.speaker.value;
  const cid = who?.characterId ?? m?.characterId;
  const c = chat?.characters.find((x) => x.id === cid) || chat?.characters[0];
  const name = who?.name || m?.name || c?.name || 'Assistant';
  const raw = (reply.kind === 'continue' ? reply.base : '') + reply.text.value;
  // The display copy of the text so far (when the chat has display rules), then what came since.
  const shown = reply.shown.value;
  const text = shown && raw.startsWith(shown.source) ? shown.copy + raw.slice(shown.source.length) : raw;
  const reasoning = reply.reasoning.value;
  const tools = reply.tools.value;
  const waiting = reply.status.value === 'waiting';
  return html`<article class="message assistant streaming" data-key=${m ? String(m.id) : 'streaming'} aria-label=${name} aria-busy="true">
    <${Avatar} src=${c ? `/api/characters/${c.id}/avatar` : null} name=${name} />
    <div class="bubble">
      <header class="message-head"><span class="speaker">${name}</span>
        <span class="pill live">${waiting ? 'waiting for you' : 'replying'}</span>
        ${who?.turns && who.turns > 1 ? html`<span class="pill" title="Group reply: members answer one after the other">${who.turn} of ${who.turns}</span>` : null}</header>
      ${reasoning ? html`<details class="reasoning" open=${!text}><summary>Reasoning</summary><div class="prose" dangerouslySetInnerHTML=${{ __html: render(reasoning, chatView.id.value) }}></div></details>` : null}
      ${text ? html`<div class="prose content" dangerouslySetInnerHTML=${{ __html: render(text, chatView.id.value) }}></div>` : html`<div class="typing" aria-label="Writing"><span></span><span></span><span></span></div>`}
      ${tools.length ? html`<div class="tool-cards">${tools.map((t) => html`<${ToolCard} key=${t.callId} card=${t} chatId=${chatView.id.value} />`)}</div>` : null}
    </div>
  </article>`;
}
