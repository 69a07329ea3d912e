// A chat theme (the engine's theme object: background, bubbles, fonts, labels, input area,
// avatar, custom CSS) as a stylesheet for this app, and the app's current theme. Which theme is
// current is the library setting `theme.current` (0: the app's own look), so the CLI, MCP, a
// model's tool or another tab can change it and every open page follows at once (store.js
// re-reads it on each `setting` library event); the themes themselves live in the library
// (`tavo_theme_*`).
import { signal } from '@preact/signals';
import { put } from './api.js';

/** The current theme's id (null: the app's own look). */
export const currentThemeId = signal(/** @type {number|null} */ (null));

/** Where this browser kept its choice before the library did; moved into the setting once. */
const LEGACY_KEY = 'tavo.theme';

/**
 * The setting's value as the app holds it (store.js calls this with every settings read).
 * @param {any} value
 */
export function followCurrentTheme(value) {
  const id = Number(value) > 0 ? Number(value) : null;
  if (id == null) {
    let legacy = null;
    try {
      legacy = Number(localStorage.getItem(LEGACY_KEY)) || null;
      localStorage.removeItem(LEGACY_KEY);
    } catch {
      /* private mode */
    }
    if (legacy) {
      setCurrentTheme(legacy);
      return;
    }
  }
  if (currentThemeId.value !== id) currentThemeId.value = id;
}

/**
 * Applies a theme (null: the app's own look) for every door: the setting `theme.current`.
 * @param {number|null} id
 */
export function setCurrentTheme(id) {
  currentThemeId.value = id;
  put('/api/settings/theme.current', { value: id ?? 0 }).catch(() => {
    /* the next settings read puts the signal back to what the library holds */
  });
}

/** `#AARRGGBB` (the theme notation) → CSS `#RRGGBBAA`. @param {string|undefined} c */
export function cssColor(c) {
  if (!c || !/^#([0-9a-f]{6}|[0-9a-f]{8})$/i.test(c)) return null;
  return c.length === 9 ? '#' + c.slice(3) + c.slice(1, 3) : c;
}

/** A CSS string literal. @param {string} s */
const quote = (s) => JSON.stringify(String(s)).replace(/</g, '\\3c ');

/** @param {any} ts @returns {string[]} */
function textRules(ts) {
  if (!ts) return [];
  const out = [];
  const c = cssColor(ts.color);
  if (c) out.push(`color: ${c}`);
  if (ts.fontSize) out.push(`font-size: ${Number(ts.fontSize)}px`);
  if (ts.bold != null) out.push(`font-weight: ${ts.bold ? 700 : 400}`);
  if (ts.italic != null) out.push(`font-style: ${ts.italic ? 'italic' : 'normal'}`);
  if (ts.fontFamily) out.push(`font-family: ${quote(ts.fontFamily)}, var(--font)`);
  if (ts.lineHeight) out.push(`line-height: ${Number(ts.lineHeight)}`);
  return out;
}

/** @param {any} b @returns {string[]} */
function bubbleRules(b) {
  if (!b) return [];
  const out = [];
  const fill = cssColor(b.color);
  if (fill) out.push(`background: ${fill}`);
  const border = cssColor(b.borderColor);
  if (border) out.push(`border-color: ${border}`);
  if (b.borderWidth != null) out.push(`border-width: ${Number(b.borderWidth)}px`);
  if (b.borderRadius != null) out.push(`border-radius: ${Number(b.borderRadius)}px`);
  if (b.opacity != null) out.push(`opacity: ${Number(b.opacity)}`);
  return out;
}

/**
 * The stylesheet of a theme. With `scope` (a selector), every rule applies inside it only and
 * custom CSS is left out: the theme screen's preview.
 * @param {any} t @param {string} [scope] @returns {string}
 */
export function themeCss(t, scope = '') {
  if (!t) return '';
  /** @type {string[]} */
  const css = [];
  const root = scope || 'body';
  /** @param {string} sel @param {(string|null|false|undefined)[]} rules */
  const rule = (sel, rules) => {
    const r = rules.filter(Boolean);
    if (!r.length) return;
    const sels = sel.split(',').map((x) => (scope ? (x.trim() === 'body' ? scope : scope + ' ' + x.trim()) : x.trim()));
    css.push(`${sels.join(', ')} { ${r.join('; ')}; }`);
  };
  const bg = t.background || {};
  const bgColor = cssColor(bg.color);
  rule('body', bgColor ? [`background: ${bgColor}`] : []);
  if (bgColor && !scope) css.push(`:root { --bg: ${bgColor}; }`);
  if (bg.image && /^(https?:|\/api\/)/.test(bg.image)) {
    css.push(`${root} { background-image: url(${quote(bg.image)}); background-size: cover; background-attachment: fixed; }`);
  }
  rule('.message.user .bubble', bubbleRules(t.userBubble));
  rule('.message.assistant .bubble, .message.char .bubble', bubbleRules(t.characterBubble));
  rule('.message.user .bubble', textRules(t.userBubbleFont && t.userBubbleFont.textStyle));
  rule('.message.assistant .bubble, .message.char .bubble', textRules(t.characterBubbleFont && t.characterBubbleFont.textStyle));
  const input = t.inputArea || {};
  rule('.composer textarea', [cssColor(input.color) && `background: ${cssColor(input.color)}`, cssColor(input.fontColor) && `color: ${cssColor(input.fontColor)}`]);
  const av = t.avatar || {};
  rule('.message .avatar', [
    av.visible === false && 'display: none',
    av.shape && `border-radius: ${av.shape === 'circle' ? '50%' : av.shape === 'rounded' ? '22%' : '0'}`,
    av.size && `width: ${Number(av.size)}px; height: ${Number(av.size)}px`,
  ]);
  if (!scope && typeof t.customCss === 'string' && t.customCss.trim()) css.push(t.customCss.replace(/<\/style/gi, ''));
  return css.join('\n');
}
