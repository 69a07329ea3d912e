// The token login: the token goes to POST /api/session once, the server answers with an
// HttpOnly cookie; the page never keeps the token.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { login, errorText } from '../store.js';

export function Login() {
  const [token, setToken] = useState('');
  const [error, setError] = useState(/** @type {string|null} */ (null));
  const [busy, setBusy] = useState(false);
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(token.trim());
      setToken('');
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="login">
    <form class="card" onSubmit=${submit}>
      <h1>tavo</h1>
      <p>This server needs its access token (the one given to <code>tavo serve --token</code>).</p>
      <label for="token">Access token</label>
      <input id="token" type="password" autocomplete="current-password" value=${token}
        onInput=${(/** @type {any} */ e) => setToken(e.currentTarget.value)} required />
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <button type="submit" class="primary" disabled=${busy || !token.trim()}>Log in</button>
    </form>
  </main>`;
}
