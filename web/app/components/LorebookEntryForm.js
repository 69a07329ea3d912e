// One lorebook entry's fields (seed: 世界书条目字段; SillyTavern's extras kept under their own
// names): keys and secondary keys with their logic, strategy, position, depth, role, order,
// probability, scan depth, matching, timed effects, inclusion group, recursion flags and the
// character filter. Every change goes to the book's draft; the server validates on save.
import { html } from '../html.js';

const POSITIONS = [
  ['lorebookBefore', 'Before the character'],
  ['lorebookAfter', 'After the character'],
  ['topOfExampleMessages', 'Top of example messages'],
  ['bottomOfExampleMessages', 'Bottom of example messages'],
  ['atDepth', 'At depth'],
];
export const POSITION_NAMES = Object.fromEntries(POSITIONS);
const LOGIC = [
  ['none', 'None'],
  ['andAny', 'AND any'],
  ['andAll', 'AND all'],
  ['notAny', 'NOT any'],
  ['notAll', 'NOT all'],
];

/** @param {string} s */
const keys = (s) => s.split(',').map((k) => k.trim()).filter(Boolean);

/**
 * @param {{entry: any, onChange: (change: Record<string, any>) => void, onDuplicate: () => void,
 *   onDelete: () => void}} props
 */
export function LorebookEntryForm({ entry, onChange, onDuplicate, onDelete }) {
  /** @param {string} label @param {string} key @param {{min?: number, max?: number}} [r] */
  const num = (label, key, r = {}) => html`<label class="field narrow">${label}
    <input type="number" min=${r.min} max=${r.max} value=${entry[key] ?? ''}
      onInput=${(/** @type {any} */ e) => e.currentTarget.value !== '' && onChange({ [key]: Number(e.currentTarget.value) })} /></label>`;
  /** @param {string} label @param {string} key @param {boolean} [dflt] */
  const check = (label, key, dflt = false) => html`<label class="check"><input type="checkbox" checked=${entry[key] ?? dflt}
      onChange=${(/** @type {any} */ e) => onChange({ [key]: e.currentTarget.checked })} /> ${label}</label>`;
  const filter = entry.characterFilter || {};
  return html`<form class="entry-form" aria-label=${'Entry ' + (entry.name || entry.identifier)} onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
    <div class="row wrap">
      <label class="field grow">Name <input value=${entry.name || ''} onInput=${(/** @type {any} */ e) => onChange({ name: e.currentTarget.value })} /></label>
      ${check('Enabled', 'enabled', true)}
      <label class="field narrow">Strategy <select value=${entry.strategy || 'keyword'} onChange=${(/** @type {any} */ e) => onChange({ strategy: e.currentTarget.value })}>
        <option value="keyword">Keyword</option><option value="constant">Constant</option></select></label>
    </div>
    <label class="field">Content <textarea rows="7" value=${entry.content || ''} onInput=${(/** @type {any} */ e) => onChange({ content: e.currentTarget.value })}></textarea></label>
    <label class="field">Keys <span class="muted small" aria-hidden="true">(comma-separated; /regex/flags allowed)</span>
      <input value=${(entry.keywords || []).join(', ')} onChange=${(/** @type {any} */ e) => onChange({ keywords: keys(e.currentTarget.value) })} /></label>
    <div class="row wrap">
      <label class="field grow">Secondary keys <input value=${(entry.secondaryKeywords || []).join(', ')}
        onChange=${(/** @type {any} */ e) => onChange({ secondaryKeywords: keys(e.currentTarget.value) })} /></label>
      <label class="field narrow">Logic <select value=${entry.secondaryKeywordStrategy || 'none'}
        onChange=${(/** @type {any} */ e) => onChange({ secondaryKeywordStrategy: e.currentTarget.value })}>
        ${LOGIC.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select></label>
    </div>
    <div class="row wrap">
      <label class="field">Position <select value=${entry.injectionPosition || 'lorebookBefore'}
        onChange=${(/** @type {any} */ e) => onChange({ injectionPosition: e.currentTarget.value })}>
        ${POSITIONS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select></label>
      ${num('Depth', 'injectionDepth', { min: 0 })}
      <label class="field narrow">Role <select value=${entry.injectionRole || 'system'} onChange=${(/** @type {any} */ e) => onChange({ injectionRole: e.currentTarget.value })}>
        <option value="system">System</option><option value="user">User</option><option value="assistant">Assistant</option></select></label>
      ${num('Order', 'order')}
      ${num('Probability', 'probability', { min: 0, max: 100 })}
      ${num('Scan depth', 'scanDepth', { min: 0, max: 1000 })}
    </div>
    <div class="row wrap">
      ${check('Case-sensitive', 'caseSensitive')} ${check('Whole words', 'matchWholeWord')}
      ${num('Sticky', 'sticky', { min: 0 })} ${num('Cooldown', 'cooldown', { min: 0 })} ${num('Delay', 'delay', { min: 0 })}
    </div>
    <div class="row wrap">
      <label class="field">Inclusion group <input value=${entry.groupName ?? entry.group ?? ''}
        onInput=${(/** @type {any} */ e) => onChange({ groupName: e.currentTarget.value })} /></label>
      ${num('Group weight', 'groupWeight', { min: 0 })}
      ${check('Prioritise in group', 'groupOverride')}
    </div>
    <div class="row wrap">
      ${check('Prevent recursion', 'preventRecursion')} ${check('Exclude recursion', 'excludeRecursion')}
      ${check('Delay until recursion', 'delayUntilRecursion')}
    </div>
    <div class="row wrap">
      <label class="field grow">Character filter <span class="muted small" aria-hidden="true">(names, comma-separated)</span>
        <input value=${(filter.names || []).join(', ')}
          onChange=${(/** @type {any} */ e) => onChange({ characterFilter: { ...filter, names: keys(e.currentTarget.value) } })} /></label>
      <label class="check"><input type="checkbox" checked=${!!filter.isExclude}
        onChange=${(/** @type {any} */ e) => onChange({ characterFilter: { ...filter, isExclude: e.currentTarget.checked } })} /> Exclude these</label>
    </div>
    <div class="row wrap end">
      <button type="button" onClick=${onDuplicate}>Duplicate entry</button>
      <button type="button" class="danger" onClick=${onDelete}>Delete entry</button>
    </div>
  </form>`;
}
