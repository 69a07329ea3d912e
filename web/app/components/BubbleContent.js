// A message's text as the user sees it: its display copy (macros and display regex rules,
// from the server) shown as Markdown, or — with the chat's advanced rendering on — as
// sanitised HTML + CSS, or in a sandboxed script frame when it holds scripts or a whole
// document and the `rendering.javascript` setting lets them run (`ask`: once the user allows
// the card). The stored text is never changed by any of this.
import { html } from '../html.js';
import { render } from '../markdown.js';
import { classify, sanitize } from '../bubble/detect.js';
import { resolvingFilesOf } from '../files.js';
import { marked } from 'marked';
import { chatView, rendering, allowCardScripts } from '../store.js';
import { BubbleHtml } from './BubbleHtml.js';
import { BubbleFrame } from './BubbleFrame.js';

/** The card a message's scripts belong to: its speaker, else the chat's first character. @param {import('../store.js').Message} m */
function cardOf(m) {
  const chat = chatView.chat.value;
  const c = chat?.characters.find((x) => x.id === m.characterId) || chat?.characters[0];
  return c ? { key: `character:${c.id}`, name: c.name } : { key: 'chat', name: chat?.name || 'this chat' };
}

/** @param {string} md @param {number} chatId */
const light = (md, chatId) =>
  md.trim() ? resolvingFilesOf(chatId, () => sanitize(/** @type {string} */ (marked.parse(md, { async: false, gfm: true, breaks: true })))) : '';

/** @param {{message: import('../store.js').Message}} props */
export function BubbleContent({ message: m }) {
  const text = m.display?.content ?? m.content;
  const chat = /** @type {any} */ (chatView.chat.value);
  // Made only when shown: a bubble that runs in a frame never parses its text as Markdown.
  const markdown = () => html`<div class="prose content" dangerouslySetInnerHTML=${{ __html: render(text, chat?.id ?? null) }}></div>`;
  if (!chat || chat.advancedRendering === false) return markdown();
  const r = classify(text, chat.id);
  if (r.mode === 'markdown') return markdown();
  if (r.mode === 'html') return html`<div class="prose content rich"><${BubbleHtml} html=${r.html} /></div>`;
  const card = cardOf(m);
  const js = rendering.javascript.value;
  if (js === 'off' || (js === 'ask' && !rendering.allowedCards.value.has(card.key)))
    return html`<div class="prose content rich">
      ${js === 'ask'
        ? html`<p class="bubble-ask" role="note">This message has scripts.
            <button type="button" class="small" onClick=${() => allowCardScripts(card.key)}>Run scripts of ${card.name}</button></p>`
        : null}
      <${BubbleHtml} html=${r.light} />
    </div>`;
  const before = light(r.before, chat.id);
  const after = light(r.after, chat.id);
  return html`<div class="prose content rich scripted">
    ${before ? html`<${BubbleHtml} html=${before} />` : null}
    <${BubbleFrame} doc=${r.doc} source=${m.content} chatId=${chat.id} messageId=${m.id} card=${card} />
    ${after ? html`<${BubbleHtml} html=${after} />` : null}
  </div>`;
}
