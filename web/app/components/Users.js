// Settings › Users, for an admin of a server with accounts (`tavo serve --accounts`): everyone
// who can log in, with the space their library takes and their running replies; add a user,
// set a new password, make or unmake an admin, disable or enable, remove (the library goes too
// unless kept). The same registry as `tavo user …` (GET/POST/PUT/DELETE /api/admin/users).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { get, post, put, del } from '../api.js';
import { link } from '../router.js';
import { toast, errorText, askBubble, currentUser } from '../store.js';

/** @param {number} n */
const size = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`);

export function Users() {
  const [users, setUsers] = useState(/** @type {any[]|null} */ (null));
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [admin, setAdmin] = useState(false);
  const [newPassword, setNewPassword] = useState(/** @type {Record<string, string>} */ ({}));
  const load = () => get('/api/admin/users').then((r) => setUsers(r.users), (e) => toast(errorText(e), 'error'));
  useEffect(() => { load(); }, []);
  /** @param {() => Promise<any>} f @param {string} done */
  const act = async (f, done) => {
    try {
      await f();
      toast(done, 'ok');
      await load();
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  /** @param {Event} e */
  const add = (e) => {
    e.preventDefault();
    act(async () => {
      await post('/api/admin/users', { name: name.trim(), password, admin });
      setName('');
      setPassword('');
      setAdmin(false);
    }, `Added ${name.trim()}`);
  };
  /** @param {any} u */
  const remove = async (u) => {
    const yes = await askBubble({ kind: 'confirm', title: `Remove ${u.name}?`, text: `${u.name} can no longer log in, and their library (characters, chats, files, keys) is deleted.` });
    if (yes) act(() => del(`/api/admin/users/${encodeURIComponent(u.name)}`), `Removed ${u.name}`);
  };
  const me = currentUser.value;
  if (me && !me.admin) return html`<section class="screen"><h1>Users</h1><p>Only an admin manages users.</p></section>`;
  return html`<section class="screen users" aria-labelledby="users-title">
    <p><a href="/settings" onClick=${link}>← Settings</a></p>
    <h1 id="users-title">Users</h1>
    <p class="muted">Each user has a library of their own: characters, chats, files, connections and keys are theirs alone.</p>
    ${users == null
      ? html`<p aria-busy="true">Loading…</p>`
      : html`<ul class="user-list" aria-label="Users">${users.map((u) => html`<li key=${u.id} class=${u.disabled ? 'disabled' : ''}>
          <strong>${u.name}</strong>
          ${u.admin ? html` <span class="pill small">admin</span>` : null}
          ${u.disabled ? html` <span class="pill small">disabled</span>` : null}
          <span class="muted"> · ${size(u.usageBytes)} · ${u.liveReplies} running repl${u.liveReplies === 1 ? 'y' : 'ies'}</span>
          <div class="row">
            <input type="password" aria-label=${`New password for ${u.name}`} placeholder="New password" autocomplete="new-password"
              value=${newPassword[u.name] || ''} onInput=${(/** @type {any} */ e) => setNewPassword({ ...newPassword, [u.name]: e.currentTarget.value })} />
            <button type="button" disabled=${!(newPassword[u.name] || '').length}
              onClick=${() => act(async () => {
                await put(`/api/admin/users/${encodeURIComponent(u.name)}`, { password: newPassword[u.name] });
                setNewPassword({ ...newPassword, [u.name]: '' });
              }, `Set a new password for ${u.name}; their sessions ended`)}>Set password</button>
            <button type="button" onClick=${() => act(() => put(`/api/admin/users/${encodeURIComponent(u.name)}`, { admin: !u.admin }), u.admin ? `${u.name} is no longer an admin` : `${u.name} is an admin`)}>${u.admin ? 'Remove admin' : 'Make admin'}</button>
            <button type="button" onClick=${() => act(() => put(`/api/admin/users/${encodeURIComponent(u.name)}`, { disabled: !u.disabled }), u.disabled ? `Enabled ${u.name}` : `Disabled ${u.name}`)}>${u.disabled ? 'Enable' : 'Disable'}</button>
            <button type="button" class="danger" onClick=${() => remove(u)}>Remove</button>
          </div>
        </li>`)}</ul>`}
    <form class="card" onSubmit=${add} aria-label="Add a user">
      <h2>Add a user</h2>
      <label for="new-user-name">Name</label>
      <input id="new-user-name" autocomplete="off" value=${name} onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} required />
      <label for="new-user-password">Password</label>
      <input id="new-user-password" type="password" autocomplete="new-password" value=${password} onInput=${(/** @type {any} */ e) => setPassword(e.currentTarget.value)} required />
      <label><input type="checkbox" checked=${admin} onChange=${(/** @type {any} */ e) => setAdmin(e.currentTarget.checked)} /> Admin (may manage users)</label>
      <button type="submit" class="primary" disabled=${!name.trim() || password.length < 8}>Add user</button>
    </form>
  </section>`;
}
