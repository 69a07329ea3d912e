// The workbench's screens by route (issue 16): the editors, the asset lists, the prompt
// inspector and the themes. App.js asks here first for any route it does not draw itself.
import { html } from '../html.js';
import { CharacterEditor } from './CharacterEditor.js';
import { PresetEditor } from './PresetEditor.js';
import { LorebookEditor } from './LorebookEditor.js';
import { RegexEditor } from './RegexEditor.js';
import { PromptInspector } from './PromptInspector.js';
import { AssetList } from './AssetList.js';
import { Themes } from './Themes.js';

/** The screen of a workbench route, or null. @param {import('../router.js').Route} r */
export function workbenchScreen(r) {
  switch (r.name) {
    case 'characterEdit':
      return html`<${CharacterEditor} key=${r.id} id=${r.id} />`;
    case 'preset':
      return html`<${PresetEditor} key=${r.id} id=${r.id} />`;
    case 'lorebook':
      return html`<${LorebookEditor} key=${r.id} id=${r.id} />`;
    case 'regex':
      return html`<${RegexEditor} key=${r.id} id=${r.id} />`;
    case 'prompt':
      return html`<${PromptInspector} key=${r.id} id=${r.id} />`;
    case 'assets':
      return html`<${AssetList} key=${r.kind} kind=${r.kind} />`;
    case 'themes':
      return html`<${Themes} />`;
    default:
      return null;
  }
}
