// The chat's own background (seed 002: `tavo.chat.update({background})`, a chat-level override
// that leaves the theme alone): a layer behind the chat view, over the theme's background, and
// restored with the chat on every visit. One source applies, in the seed's precedence (the
// engine's `ChatBackground::resolve`): `useAvatar` > `image` > `color`; `opacity` applies to an
// image only.
import { html } from '../html.js';
import { chatView } from '../store.js';
import { fileUrl } from '../files.js';
import { cssColor } from '../themeCss.js';

/**
 * The style of a chat's background layer, or null when it has no override (or nothing it
 * names can be shown: a character without an avatar, a path outside the library).
 * @param {any} chat
 * @returns {Record<string, string> | null}
 */
export function backgroundStyle(chat) {
  const bg = chat && chat.background;
  if (!bg || typeof bg !== 'object') return null;
  /** @param {string} src @param {number} opacity */
  const image = (src, opacity) => ({ backgroundImage: `url(${JSON.stringify(src)})`, opacity: String(opacity) });
  if (bg.useAvatar === true) {
    // The chat's (first) character's avatar; the member summary may predate an upload, so
    // the character's own avatar address is asked for when the summary names none.
    const first = (chat.characters || [])[0];
    if (!first) return null;
    return image(typeof first.avatar === 'string' && first.avatar ? first.avatar : `/api/characters/${first.id}/avatar`, 1);
  }
  if (typeof bg.image === 'string' && bg.image) {
    const src = /^https?:\/\//i.test(bg.image) ? bg.image : fileUrl(bg.image, chat.id);
    const opacity = typeof bg.opacity === 'number' ? Math.min(1, Math.max(0, bg.opacity)) : 1;
    return src ? image(src, opacity) : null;
  }
  const color = cssColor(bg.color);
  return color ? { backgroundColor: color } : null;
}

export function ChatBackground() {
  const style = backgroundStyle(chatView.chat.value);
  return style ? html`<div class="chat-background" aria-hidden="true" style=${style}></div>` : null;
}
