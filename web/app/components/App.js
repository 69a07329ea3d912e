// The frame: navigation, the screen of the current route, toasts; the login screen first
// when the server wants its token.
import { html } from '../html.js';
import { route, link } from '../router.js';
import { session, liveReplies } from '../store.js';
import { Login } from './Login.js';
import { Toasts } from './Toasts.js';
import { AppTheme } from './AppTheme.js';
import { BubbleDialogs } from './BubbleDialogs.js';
import { Screen } from './Screen.js';
import { isScreen, prefetchScreens } from '../screens.js';

let prefetched = false;

export function App() {
  if (session.value === 'checking') return html`<div class="splash" aria-busy="true">tavo</div>`;
  if (session.value === 'login') return html`<${Login} /><${Toasts} />`;
  const r = route.value;
  const waiting = Object.values(liveReplies.value).filter((x) => x.status === 'waiting').length;
  /** @param {string} href @param {string} label @param {boolean} current */
  const nav = (href, label, current) =>
    html`<a href=${href} onClick=${link} aria-current=${current ? 'page' : undefined}>${label}</a>`;
  let screen;
  if (isScreen(r.name)) {
    const id = 'id' in r ? r.id : 'kind' in r ? r.kind : '';
    /** @type {Record<string, any>} */
    const props = 'id' in r ? { id: r.id } : 'kind' in r ? { kind: r.kind } : {};
    screen = html`<${Screen} key=${r.name + ':' + id} name=${r.name} props=${props} />`;
    if (!prefetched) {
      prefetched = true;
      prefetchScreens(r.name);
    }
  } else {
    screen = html`<section class="screen"><h1>Not found</h1><p>Nothing lives at <code>${r.name === 'notfound' ? r.path : location.pathname}</code>.</p>
        <p><a href="/" onClick=${link}>Back to the library</a></p></section>`;
  }
  return html`
    <header class="topbar">
      <a class="brand" href="/" onClick=${link} aria-label="tavo, the library">tavo</a>
      <nav aria-label="Main">
        ${nav('/', 'Characters', r.name === 'library' || r.name === 'character')}
        ${nav('/chats', 'Chats', r.name === 'chats' || r.name === 'chat')}
        ${waiting ? html`<span class="badge" role="status" title="Replies waiting for you">${waiting} waiting</span>` : null}
        ${nav('/presets', 'Presets', r.name === 'preset' || (r.name === 'assets' && r.kind === 'preset'))}
        ${nav('/lorebooks', 'Lorebooks', r.name === 'lorebook' || (r.name === 'assets' && r.kind === 'lorebook'))}
        ${nav('/regex', 'Regex', r.name === 'regex' || (r.name === 'assets' && r.kind === 'regex'))}
        ${nav('/themes', 'Themes', r.name === 'themes')}
        ${nav('/settings', 'Settings', r.name === 'settings' || r.name === 'plugins' || r.name === 'plugin' || r.name === 'logs' || r.name === 'users')}
      </nav>
    </header>
    <${AppTheme} />
    <main id="main">${screen}</main>
    <${BubbleDialogs} />
    <${Toasts} />`;
}
