// The frame: navigation, the screen of the current route, toasts; the login screen first
// when the server wants its token.
import { html } from '../html.js';
import { route, link } from '../router.js';
import { session, liveReplies } from '../store.js';
import { Login } from './Login.js';
import { Library } from './Library.js';
import { CharacterPage } from './CharacterPage.js';
import { ChatView } from './ChatView.js';
import { ChatList } from './ChatList.js';
import { Settings } from './Settings.js';
import { Toasts } from './Toasts.js';
import { workbenchScreen } from './Workbench.js';
import { AppTheme } from './AppTheme.js';
import { BubbleDialogs } from './BubbleDialogs.js';
import { PluginList } from './PluginList.js';
import { PluginSettings } from './PluginSettings.js';

export function App() {
  if (session.value === 'checking') return html`<div class="splash" aria-busy="true">tavo</div>`;
  if (session.value === 'login') return html`<${Login} /><${Toasts} />`;
  const r = route.value;
  const waiting = Object.values(liveReplies.value).filter((x) => x.status === 'waiting').length;
  /** @param {string} href @param {string} label @param {boolean} current */
  const nav = (href, label, current) =>
    html`<a href=${href} onClick=${link} aria-current=${current ? 'page' : undefined}>${label}</a>`;
  let screen;
  switch (r.name) {
    case 'library':
      screen = html`<${Library} />`;
      break;
    case 'character':
      screen = html`<${CharacterPage} key=${r.id} id=${r.id} />`;
      break;
    case 'chat':
      screen = html`<${ChatView} key=${r.id} id=${r.id} />`;
      break;
    case 'chats':
      screen = html`<${ChatList} />`;
      break;
    case 'settings':
      screen = html`<${Settings} />`;
      break;
    case 'plugins':
      screen = html`<${PluginList} />`;
      break;
    case 'plugin':
      screen = html`<${PluginSettings} key=${r.id} id=${r.id} />`;
      break;
    default:
      screen = workbenchScreen(r) || html`<section class="screen"><h1>Not found</h1><p>Nothing lives at <code>${r.name === 'notfound' ? r.path : location.pathname}</code>.</p>
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
        ${nav('/settings', 'Settings', r.name === 'settings' || r.name === 'plugins' || r.name === 'plugin')}
      </nav>
    </header>
    <${AppTheme} />
    <main id="main">${screen}</main>
    <${BubbleDialogs} />
    <${Toasts} />`;
}
