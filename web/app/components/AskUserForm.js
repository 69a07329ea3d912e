// `tavo_ask_user`: the model asks; pick an option or type an answer (when allowed). An option
// shows its label, its description and its `meta` note (seed 000: short extra information).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { answerQuestion, toast, errorText } from '../store.js';

/** @param {{pending: import('../store.js').Pending}} props */
export function AskUserForm({ pending }) {
  const q = pending.question || { question: '', options: [], allowOther: true };
  const [custom, setCustom] = useState('');
  /** @param {any} a */
  const send = (a) => answerQuestion(a).catch((e) => toast(errorText(e), 'error'));
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    if (custom.trim()) send({ kind: 'custom', text: custom.trim() });
  };
  return html`<form class="ask card" aria-labelledby="ask-title" onSubmit=${submit}>
    <h2 id="ask-title">${q.question}</h2>
    <div class="options" role="group" aria-label="Options">
      ${q.options.map(
        (o) => html`<button type="button" key=${o.value} class=${o.value === q.defaultValue ? 'primary' : ''}
            onClick=${() => send({ kind: 'option', value: o.value })}>
          ${o.label}${o.description ? html`<small>${o.description}</small>` : null}${o.meta ? html`<small class="option-meta">${o.meta}</small>` : null}</button>`,
      )}
    </div>
    ${q.allowOther
      ? html`<div class="row"><input class="grow" aria-label="Your answer" placeholder=${q.placeholder || 'Your answer'} value=${custom}
            onInput=${(/** @type {any} */ e) => setCustom(e.currentTarget.value)} />
          <button type="submit" disabled=${!custom.trim()}>Answer</button></div>`
      : null}
    <button type="button" class="link" onClick=${() => send({ kind: 'cancelled' })}>Skip the question</button>
  </form>`;
}
