// The current theme styling the whole app: one <style> element from the theme object
// (themeCss.js), re-read when the theme changes in the library.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { op } from '../api.js';
import { libraryTick } from '../store.js';
import { currentThemeId, themeCss } from '../themeCss.js';

export function AppTheme() {
  const id = currentThemeId.value;
  const [css, setCss] = useState('');
  useEffect(() => {
    if (id == null) {
      setCss('');
      return;
    }
    // Library events come in bursts (a reply writes messages, a tool the theme): only the
    // newest read may set the style, or an older answer arriving late would undo a change.
    let current = true;
    op('tavo_theme_get', { id }).then((t) => current && setCss(themeCss(t)), () => current && setCss(''));
    return () => {
      current = false;
    };
  }, [id, libraryTick.value]);
  return css ? html`<style id="tavo-theme">${css}</style>` : null;
}
