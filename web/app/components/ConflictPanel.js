// A save refused because the asset changed elsewhere (another tab, the CLI, a bubble script,
// the model's tools): both versions side by side, field by field (entry by entry for lists of
// entries), and the choice — keep mine, keep theirs, or merge by field. Nothing is written
// until the user chooses.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { differences, resolve } from '../drafts.js';

/** @param {any} v */
function shown(v) {
  if (v === undefined) return '(absent)';
  if (typeof v === 'string') return v || '(empty)';
  return JSON.stringify(v, null, 1);
}

/** @param {{d: import('../drafts.js').AssetDraft, labels?: Record<string, string>}} props */
export function ConflictPanel({ d, labels = {} }) {
  const theirs = d.conflict.value;
  const mine = d.draft.value;
  const [choice, setChoice] = useState(/** @type {Record<string, 'mine'|'theirs'>} */ ({}));
  if (!theirs || !mine) return null;
  const diffs = differences(mine, theirs, d.base.value);
  /** @param {'mine'|'theirs'} side */
  const all = (side) => Object.fromEntries(diffs.map((x) => [x.key, side]));
  /** By default each field keeps the side that changed it (mine where I edited, else theirs). */
  /** @type {Record<string, 'mine'|'theirs'>} */
  const defaults = Object.fromEntries(diffs.map((x) => [x.key, x.changed ? 'mine' : 'theirs']));
  return html`<section class="conflict" role="alert" aria-label="Conflict">
    <p><strong>Not saved: this ${d.kind} was changed elsewhere</strong> while you edited it (you opened
      revision ${mine.revision}; it is now at revision ${theirs.revision}). Nothing was overwritten.${' '}
      ${diffs.length} field${diffs.length === 1 ? '' : 's'} differ; each starts on the side that changed it.</p>
    <div class="row wrap">
      <button type="button" onClick=${() => resolve(d, all('mine'))}>Keep mine</button>
      <button type="button" onClick=${() => resolve(d, all('theirs'))}>Keep theirs</button>
      <button type="button" class="primary" onClick=${() => resolve(d, { ...defaults, ...choice })}>Merge as chosen</button>
    </div>
    <table class="conflict-table">
      <thead><tr><th scope="col">Field</th><th scope="col">Mine</th><th scope="col">Theirs</th></tr></thead>
      <tbody>
        ${diffs.map((x) => {
          const side = choice[x.key] || defaults[x.key];
          const label = labels[x.key] || x.label;
          return html`<tr key=${x.key}>
            <th scope="row">${label}</th>
            <td class=${side === 'mine' ? 'chosen' : ''}><label class="pick"><input type="radio" name=${'c-' + x.key} checked=${side === 'mine'}
                aria-label=${'Mine: ' + label} onChange=${() => setChoice({ ...choice, [x.key]: 'mine' })} /> mine</label>
              <pre>${shown(x.mine)}</pre></td>
            <td class=${side === 'theirs' ? 'chosen' : ''}><label class="pick"><input type="radio" name=${'c-' + x.key} checked=${side === 'theirs'}
                aria-label=${'Theirs: ' + label} onChange=${() => setChoice({ ...choice, [x.key]: 'theirs' })} /> theirs</label>
              <pre>${shown(x.theirs)}</pre></td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
