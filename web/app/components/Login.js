// The login page: the access token of `tavo serve --token`, or on a server with accounts a name
// and a password. Either goes to POST /api/session once; the server answers with an HttpOnly
// cookie, and the page never keeps the secret.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { login, errorText, accountsMode } from '../store.js';

export function Login() {
  const [token, setToken] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [busy, setBusy] = useState(false);
  const accounts = accountsMode.value;
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(accounts ? { name: name.trim(), password } : token.trim());
      setToken('');
      setPassword('');
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  /** @param {(v: string) => void} set */
  const onInput = (set) => (/** @type {any} */ e) => set(e.currentTarget.value);
  const ready = accounts ? name.trim() && password : token.trim();
  return html`<main class="login">
    <form class="card" onSubmit=${submit} aria-label="Log in">
      <h1>tavo</h1>
      ${accounts
        ? html`<p>Log in to your library on this server.</p>
          <label for="login-name">Name</label>
          <input id="login-name" autocomplete="username" value=${name} onInput=${onInput(setName)} required />
          <label for="login-password">Password</label>
          <input id="login-password" type="password" autocomplete="current-password" value=${password} onInput=${onInput(setPassword)} required />`
        : html`<p>This server needs its access token (the one given to <code>tavo serve --token</code>).</p>
          <label for="token">Access token</label>
          <input id="token" type="password" autocomplete="current-password" value=${token} onInput=${onInput(setToken)} required />`}
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <button type="submit" class="primary" disabled=${busy || !ready}>Log in</button>
    </form>
  </main>`;
}
