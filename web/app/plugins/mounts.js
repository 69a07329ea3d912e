// Where a plugin's HTML fragment goes (Tavo §6.6): `/chat` = `/chat/body/end`, `/chat/head/start`,
// `/chat/head/end`, `/chat/body/start`, `/chat/body/end`; `/messages` = `/messages/end`,
// `/messages/start`, `/messages/end`, with `role=user|character` and `position=first|last`
// filters (combinable: the last character message). The server validated the mounts.

/** @typedef {{at: string, role: 'user'|'character'|null, position: 'first'|'last'|null}} Mount */

/** @param {string} mount @returns {Mount} */
export function parseMount(mount) {
  const [path, query = ''] = String(mount).split('?');
  const q = new URLSearchParams(query);
  const at = path === '/chat' ? '/chat/body/end' : path === '/messages' ? '/messages/end' : path;
  const role = q.get('role');
  const position = q.get('position');
  return {
    at,
    role: role === 'user' || role === 'character' ? role : null,
    position: position === 'first' || position === 'last' ? position : null,
  };
}

/** @param {import('../store.js').Message} m @param {'user'|'character'|null} role */
const roleMatches = (m, role) => !role || (role === 'user' ? m.role === 'user' : m.role === 'assistant');

/**
 * Whether a /messages fragment renders at message `m`, given the loaded messages (the tail of
 * the chat is always loaded; the first message only when nothing older exists).
 * @param {Mount} mount @param {import('../store.js').Message} m @param {import('../store.js').Message[]} msgs @param {boolean} hasMore
 */
export function messageMatches(mount, m, msgs, hasMore) {
  if (!roleMatches(m, mount.role)) return false;
  if (!mount.position) return true;
  const candidates = msgs.filter((x) => roleMatches(x, mount.role));
  if (mount.position === 'last') return candidates.length > 0 && candidates[candidates.length - 1].id === m.id;
  return !hasMore && candidates.length > 0 && candidates[0].id === m.id;
}
