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
    op('tavo_theme_get', { id }).then((t) => setCss(themeCss(t)), () => setCss(''));
  }, [id, libraryTick.value]);
  return css ? html`<style id="tavo-theme">${css}</style>` : null;
}
