// The regex editor's live tester: the rule runs on the sample through the engine itself
// (`POST /api/regex/test`: the prompt crate's pipeline on its JavaScript worker, trims,
// `{{match}}`, substitution and depth bounds included), so what is shown is what a generation
// does. The sample is typed or taken from a chat's message (with its placement and depth). The
// page only sends the rule and shows the answer.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { post } from '../api.js';
import { errorText } from '../store.js';
import { MessagePicker } from './MessagePicker.js';

/** @param {{rule: any}} props */
export function RegexTester({ rule }) {
  const [text, setText] = useState(() => sessionStorage.getItem('tavo.regexSample') || '');
  const [placement, setPlacement] = useState('');
  const [depth, setDepth] = useState('');
  const [user, setUser] = useState('User');
  const [char, setChar] = useState('Character');
  const [result, setResult] = useState(/** @type {any} */ (null));
  const [error, setError] = useState(/** @type {string|null} */ (null));
  useEffect(() => {
    const ctl = { stop: false };
    const timer = setTimeout(async () => {
      try {
        const answer = await post('/api/regex/test', {
          rule, text, placement: placement || null, depth: depth === '' ? null : Number(depth), user, char,
        });
        if (!ctl.stop) {
          setResult(answer);
          setError(null);
        }
      } catch (e) {
        if (!ctl.stop) setError(errorText(e));
      }
    }, 150);
    return () => {
      ctl.stop = true;
      clearTimeout(timer);
    };
  }, [JSON.stringify(rule), text, placement, depth, user, char]);
  return html`<section class="regex-tester" aria-label="Tester">
    <h3>Test</h3>
    <${MessagePicker} onPick=${(/** @type {{text: string, placement: string, depth: number}} */ m) => {
      setText(m.text);
      setPlacement(m.placement);
      setDepth(String(m.depth));
    }} />
    <label class="field">Sample text <textarea rows="5" value=${text}
      onInput=${(/** @type {any} */ e) => { setText(e.currentTarget.value); sessionStorage.setItem('tavo.regexSample', e.currentTarget.value); }}></textarea></label>
    <div class="row wrap">
      <label class="field narrow">As <select aria-label="Sample placement" value=${placement} onChange=${(/** @type {any} */ e) => setPlacement(e.currentTarget.value)}>
        <option value="">The rule's first placement</option><option value="user">User message</option><option value="char">AI message</option>
        <option value="reasoning">Reasoning</option><option value="lorebook">Lorebook content</option></select></label>
      <label class="field narrow">Depth <input type="number" min="0" aria-label="Sample depth" placeholder="none" value=${depth}
        onInput=${(/** @type {any} */ e) => setDepth(e.currentTarget.value)} /></label>
      <label class="field narrow">{{user}} is <input value=${user} onInput=${(/** @type {any} */ e) => setUser(e.currentTarget.value)} /></label>
      <label class="field narrow">{{char}} is <input value=${char} onInput=${(/** @type {any} */ e) => setChar(e.currentTarget.value)} /></label>
    </div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${result
      ? html`<div role="status" aria-label="Test result">
          <p class="muted small">Run at the ${result.stage} stage · ${result.replacements} replacement${result.replacements === 1 ? '' : 's'}</p>
          ${result.error ? html`<p class="error">${result.error}</p>` : null}
          ${result.skipped ? html`<p class="muted">Not applied: ${result.skipped}</p>` : null}
          <label class="field">Result <textarea readonly rows="5" aria-label="Result" value=${result.output}></textarea></label>
          ${result.matches.length
            ? html`<ol class="matches" aria-label="Matches">${result.matches.map(
                (/** @type {any} */ m, /** @type {number} */ i) => html`<li key=${i}><code>${m.text}</code> at ${m.index} → <code>${m.replacement}</code></li>`)}</ol>`
            : html`<p class="muted">No match.</p>`}
        </div>`
      : null}
  </section>`;
}
