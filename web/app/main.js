// The app's entry: renders <App> into the page and checks the session.
import { render } from 'preact';
import { html } from './html.js';
import { App } from './components/App.js';
import { checkSession } from './store.js';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
checkSession();
