// The prompt inspector (/chats/{id}/prompt): `tavo prompt --explain` made visible — the exact
// messages the next reply sends, the token parts by name against the budget, the lorebook
// entries activated (and why) and skipped (and by which gate), the regex rules applied, what
// history was cut, diagnostics. Everything is the server's explain record
// (`GET /api/chats/{id}/prompt`, the same function as the CLI); the page only lays it out.
// Parts link to their editors (the chat's preset, the entry's lorebook).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { link } from '../router.js';
import { get } from '../api.js';
import { errorText, libraryTick } from '../store.js';

const GATES = {
  disabled: 'disabled', noKey: 'no usable key', secondaryLogic: 'secondary keys did not hold', probability: 'probability roll failed',
  delay: 'delay: the chat is too short', cooldown: 'cooldown running', budget: 'lorebook budget full', inclusionGroup: 'another member of its inclusion group won',
  characterFilter: 'character filter excludes the speaker', trigger: 'its triggers exclude this kind of reply',
};

/** Preset entries whose text is a card field (the character editor edits it). */
const CARD_PARTS = ['charDescription', 'charPersonality', 'scenario', 'dialogueExamples'];

/** Preset markers whose text is the lorebook's entries at a position. @type {Record<string, string>} */
const LORE_MARKERS = { worldInfoBefore: 'lorebookBefore', worldInfoAfter: 'lorebookAfter' };

/** Sources that are neither a preset entry nor a card field. @type {Record<string, string>} */
const SOURCE_NAMES = {
  chatHistory: 'chat history', dialogueExamples: 'example dialogue', chatStart: 'chat start', groupNudge: 'group nudge',
  memory: 'long-term memory', toolHint: 'tool-use hint', toolRounds: 'an earlier reply\'s tool round',
};

/** Why earlier tool calls went back as their one-line summary. */
const FOLD_REASONS = {
  budget: 'over the result budget', logCleared: 'log cleared', otherSwipe: 'another swipe', merged: 'merged by the converter',
};

/** @param {any} r */
function reason(r) {
  if (!r) return '';
  if (r.kind === 'keyword') return `key “${r.key}” in message depth ${r.messageDepth}`;
  if (r.kind === 'recursion') return `key “${r.key}” in another entry (recursion)`;
  return r.kind;
}

/** @param {{id: number}} props */
export function PromptInspector({ id }) {
  const [data, setData] = useState(/** @type {any} */ (null));
  const [chat, setChat] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [kind, setKind] = useState('normal');
  const load = () => {
    setError(null);
    get(`/api/chats/${id}/prompt?kind=${kind}`).then(setData, (e) => setError(errorText(e)));
    get(`/api/library/chat/${id}`).then(setChat, () => setChat(null));
  };
  useEffect(load, [id, kind, libraryTick.value]);
  if (error) return html`<section class="screen"><p class="error" role="alert">${error}</p></section>`;
  if (!data) return html`<section class="screen"><p class="muted" aria-busy="true">Building the prompt…</p></section>`;
  const t = data.tokens;
  const sum = t.parts.reduce((/** @type {number} */ a, /** @type {any} */ p) => a + p.tokens, 0);
  const presetHref = chat && chat.preset ? `/presets/${chat.preset.id ?? chat.preset}` : null;
  const speaker = chat && chat.characters && chat.characters[0];
  /** Where a part is edited: card fields in the character editor, other entries in the preset. @param {string} part */
  const partHref = (part) => {
    if (['chatHistory', 'injections'].includes(part)) return null;
    if (CARD_PARTS.includes(part)) return speaker ? `/characters/${speaker.id ?? speaker}/edit` : null;
    return presetHref;
  };
  /** @param {any} lorebookId */
  const bookHref = (lorebookId) => (lorebookId ? `/lorebooks/${lorebookId}` : null);
  /** The activated entries a source stands for: one injected at a depth, or a position's whole text. @param {string} source */
  const entriesOf = (source) => {
    const m = /^lorebook:(\d*)\/(.*)$/.exec(source);
    if (m) return data.activatedEntries.filter((/** @type {any} */ a) => String(a.lorebookId ?? '') === m[1] && a.identifier === m[2]);
    const position = LORE_MARKERS[source];
    return position ? data.activatedEntries.filter((/** @type {any} */ a) => a.injectionPosition === position) : [];
  };
  /** A message's origin as words, linked to the editor that changes it. @param {string} source @param {number} i */
  const sourceLabel = (source, i) => {
    const lore = entriesOf(source);
    if (source.startsWith('lorebook:') || LORE_MARKERS[source]) {
      const what = source.startsWith('lorebook:') ? 'lorebook entry at depth' : `lorebook (${source})`;
      return html`<span key=${i} class="source source-lore">${what}: ${lore.length
        ? lore.map((/** @type {any} */ a, /** @type {number} */ j) => html`${j ? ', ' : ''}${bookHref(a.lorebookId) ? html`<a href=${bookHref(a.lorebookId)} onClick=${link}>${a.name || a.identifier}</a>` : a.name || a.identifier}`)
        : source}</span>`;
    }
    const words = SOURCE_NAMES[source] || (CARD_PARTS.includes(source) ? `card field (${source})` : `preset entry ${source}`);
    const href = partHref(source);
    return html`<span key=${i} class="source">${href ? html`<a href=${href} onClick=${link}>${words}</a>` : words}</span>`;
  };
  return html`<section class="screen inspector" aria-label="Prompt inspector">
    <div class="toolbar">
      <h1 class="grow">Prompt of the next reply</h1>
      <label>For <select aria-label="Kind of reply" value=${kind} onChange=${(/** @type {any} */ e) => setKind(e.currentTarget.value)}>
        <option value="normal">A reply</option><option value="continue">Continue</option><option value="impersonate">Impersonate</option></select></label>
      <button type="button" onClick=${load}>Rebuild</button>
      <a href=${'/chats/' + id} onClick=${link}>Back to the chat</a>
    </div>
    <p class="muted">Model ${data.model} · connection ${data.connection || 'none (built-in defaults)'} · ${data.messages.length} messages ·
      ${t.total} of ${t.budget} tokens (${t.encoding}${t.estimated ? ', estimated' : ''}) · history ${t.historyIncluded}/${t.historyAvailable} messages</p>
    ${data.historyCut ? html`<p class="warning" role="alert">${data.historyCut}</p>` : null}
    ${toolHistory(data.toolHistory)}
    <section aria-label="Token parts">
      <h2>Token parts</h2>
      <div class="budget-bar" role="img" aria-label=${`${t.total} of ${t.budget} tokens`}>
        ${t.parts.map((/** @type {any} */ p, /** @type {number} */ i) => html`<span key=${i} class=${'part-' + (i % 6)} title=${`${p.part}: ${p.tokens}`}
          style=${{ width: (t.budget ? (100 * p.tokens) / t.budget : 0) + '%' }}></span>`)}
      </div>
      <table class="parts">
        <thead><tr><th scope="col">Part</th><th scope="col">Tokens</th><th scope="col">Of the budget</th></tr></thead>
        <tbody>
          ${t.parts.map((/** @type {any} */ p, /** @type {number} */ i) => html`<tr key=${i} data-part=${p.part}>
            <th scope="row">${partHref(p.part) ? html`<a href=${partHref(p.part)} onClick=${link}>${p.part}</a>` : p.part}</th>
            <td class="num">${p.tokens}</td><td class="num">${t.budget ? ((100 * p.tokens) / t.budget).toFixed(1) : 0} %</td></tr>`)}
        </tbody>
        <tfoot>
          ${t.total > sum
            ? html`<tr data-part="(priming)"><th scope="row" title="Tokens every request carries besides its messages' parts (the reply's priming)">Reply priming</th>
                <td class="num">${t.total - sum}</td><td class="num">${t.budget ? ((100 * (t.total - sum)) / t.budget).toFixed(1) : 0} %</td></tr>`
            : null}
          <tr><th scope="row">Total</th><td class="num" data-testid="parts-sum">${Math.max(sum, t.total)}</td><td class="num">of a budget of ${t.budget}</td></tr>
        </tfoot>
      </table>
    </section>
    <section aria-label="Lorebook">
      <h2>Lorebook: ${data.activatedEntries.length} activated, ${data.skippedEntries.length} skipped</h2>
      <ul class="activations">
        ${data.activatedEntries.map((/** @type {any} */ a, /** @type {number} */ i) => html`<li key=${'a' + i} class="activated">
          <strong>activated</strong> ${bookHref(a.lorebookId) ? html`<a href=${bookHref(a.lorebookId)} onClick=${link}>${a.name || a.identifier}</a>` : a.name || a.identifier}
          <span class="muted"> — ${reason(a.reason)}; ${a.injectionPosition}${a.injectionPosition === 'atDepth' ? ' ' + a.injectionDepth : ''}, ${a.tokens} tokens</span></li>`)}
        ${data.skippedEntries.map((/** @type {any} */ s, /** @type {number} */ i) => html`<li key=${'s' + i} class="skipped">
          <strong>skipped</strong> ${bookHref(s.lorebookId) ? html`<a href=${bookHref(s.lorebookId)} onClick=${link}>${s.name || s.identifier}</a>` : s.name || s.identifier}
          <span class="muted"> — ${/** @type {any} */ (GATES)[s.gate] || s.gate}</span></li>`)}
      </ul>
    </section>
    ${data.regexApplied.length
      ? html`<section aria-label="Regex"><h2>Regex replacements</h2><ul>${data.regexApplied.map((/** @type {any} */ r, /** @type {number} */ i) => html`<li key=${i}>
          ${r.regexId ? html`<a href=${'/regex/' + r.regexId} onClick=${link}>${r.name || r.identifier}</a>` : r.name || r.identifier} on ${r.target}: ${r.replacements}</li>`)}</ul></section>`
      : null}
    ${data.diagnostics.length
      ? html`<section aria-label="Diagnostics"><h2>Diagnostics</h2><ul>${data.diagnostics.map((/** @type {any} */ x, /** @type {number} */ i) => html`<li key=${i}><code>${x.location}</code> ${x.message}</li>`)}</ul></section>`
      : null}
    <section aria-label="Messages">
      <h2>Messages sent</h2>
      <ol class="prompt-messages">${data.messages.map((/** @type {any} */ m, /** @type {number} */ i) => html`<li key=${i} class=${'prompt-message role-' + m.role}>
        <span class="pill small">${m.role}</span>
        <span class="sources" data-testid="message-sources">from ${((data.messageSources || [])[i] || []).map(sourceLabel)}</span>
        ${m.toolCalls ? html`<ul class="prompt-calls" aria-label="Tool calls">${m.toolCalls.map((/** @type {any} */ c) => html`<li key=${c.id}><code>${c.name}</code> <code>${JSON.stringify(c.arguments)}</code></li>`)}</ul>` : null}
        ${m.content ? html`<pre>${m.content}</pre>` : null}</li>`)}</ol>
    </section>
  </section>`;
}

/**
 * Earlier tool calls in this prompt: how many rounds went back, which messages were folded to
 * their summary line and why, and what a provider switch changed.
 * @param {any} h
 */
function toolHistory(h) {
  if (!h || (!h.rounds && !(h.folded || []).length)) return null;
  const folded = (h.folded || []).map((/** @type {any} */ f) => `message ${f.message} (${/** @type {any} */ (FOLD_REASONS)[f.reason] || f.reason})`);
  return html`<section aria-label="Earlier tool calls"><h2>Earlier tool calls</h2>
    <p>${h.rounds} tool round${h.rounds === 1 ? '' : 's'} sent back as calls and results${folded.length ? html`; as their summary line: ${folded.join(', ')}` : null}.</p>
    ${(h.notes || []).map((/** @type {string} */ n, /** @type {number} */ i) => html`<p key=${i} class="muted">${n}</p>`)}
  </section>`;
}
