// The app's end of a bubble frame's channel: each TavoJS method (seed 002) mapped onto the
// operation layer (`POST /api/ops/{name}`, the dispatcher every door uses) or onto the app's
// own UI (composer, toasts, pickers). The page decides nothing the server decides: ids,
// validation, write rules and the approval policy are the operations'. What the bridge adds
// is the door's part: TavoJS's soft returns (`null`/`false`/`[]` where the seed says so), the
// bare ids the seed returns instead of the tools' result objects, and the question before
// each call the seed marks (or the user's policy sets to ask).

import { get, post, op, ApiError } from '../api.js';
import { chatView, currentReply, setDraft, refreshTail, updateChat, toast, askBubble, followReply } from '../store.js';
import { runSlash } from './slash.js';
import { sendInput } from '../plugins/send.js';

/**
 * What the bridge knows of the frame that called.
 * @typedef {{chatId: number, messageId: number, card: {key: string, name: string}, keep: (id: number) => void, varsChanged: () => void,
 *   refreshVars?: () => Promise<void>, fileSaved?: (scope: string, name: string) => Promise<void>, dialogs: {open: number, cancelled: number}}} Caller
 *   `refreshVars` sends the calling frame a fresh variable snapshot (before its call's answer).
 *   `dialogs` is the frame's: one question of its own at a time, and none after three it had cancelled.
 */

/** Methods are looked up here only (never on an object a payload could name `__proto__`). @type {Map<string, (c: Caller, args: any[]) => Promise<any>>} */
export const METHODS = new Map();

/** The card's remembered answer (the user ticked "remember"), for this page's life. @type {Map<string, boolean>} */
const decisions = new Map();
/** Answers of each card that were not remembered, counted: after DENIALS denials a card's
 * further questions are answered "deny" without asking, so a script cannot keep the user
 * behind its questions. @type {Map<string, number>} */
const denials = new Map();
const DENIALS = 3;

/**
 * The TavoJS calls that ask the user before they run, as seed 002 marks them: creating,
 * updating, importing and deleting a character ("创建、更新、导入、删除角色时会弹出确认框"),
 * importing a preset, a lorebook or a regex group, creating and updating a regex group.
 * Every other call runs without a question unless the user's approval policy says `ask`
 * for its operation (Settings › Tools, or a chat's remembered choice); a `deny` there
 * refuses it on the server, with `permission_denied`.
 */
export const SEED_ASKS = new Set([
  'tavo_character_create', 'tavo_character_update', 'tavo_character_import', 'tavo_character_delete',
  'tavo_preset_import', 'tavo_lorebook_import', 'tavo_regex_import', 'tavo_regex_create', 'tavo_regex_update',
]);

/** @type {Promise<Map<string, string>> | null} */
let safetyOf = null;
/** Each operation's write safety, from `GET /api/ops` (read once). */
function safeties() {
  if (!safetyOf) {
    safetyOf = get('/api/ops').then(
      (list) => new Map(list.map((/** @type {any} */ o) => [o.name, o.safety])),
      () => new Map(),
    );
  }
  return safetyOf;
}

/** Whether the user's standing choice for `tool` (this chat's, else the global one) is `ask`.
 * Reads are never asked about. @param {Caller} c @param {string} tool */
async function policyAsks(c, tool) {
  if ((await safeties()).get(tool) === 'read') return false;
  const p = await get('/api/approvals').catch(() => null);
  const chat = p && p.chats && p.chats[String(c.chatId)];
  const choice = (chat && chat[tool]) || (p && p.tools && p.tools[tool]);
  return choice === 'ask';
}

/**
 * Asks whether the card's script may do `what`, each time (seed 002: each marked call asks).
 * The user may tick "remember" to answer the card's further questions the same way until
 * the page is reloaded. Calls that arrive while a question of the same card and operation is
 * open wait for that answer.
 * @param {Caller} c @param {string} what @param {string} [tool]
 */
async function allowed(c, what, tool = '') {
  const known = decisions.get(c.card.key);
  if (known !== undefined) return known;
  if ((denials.get(c.card.key) || 0) >= DENIALS) return false;
  const key = `${c.card.key}\u0000${tool || what}`;
  let asking = asked.get(key);
  if (!asking) {
    asking = askBubble({
      kind: 'confirm',
      title: `Allow scripts of “${c.card.name}” to ${what}?`,
      text: `A script in a message of “${c.card.name}” wants to ${what}${tool ? ` (${tool.replace(/^tavo_/, 'tavo.').replace('_', '.')})` : ''}.`,
      remember: `Remember my answer for “${c.card.name}” until the page is reloaded`,
    }).then((/** @type {any} */ a) => {
      asked.delete(key);
      const yes = !!(a && a.allow);
      if (a && a.remember) decisions.set(c.card.key, yes);
      else if (!yes) {
        const n = (denials.get(c.card.key) || 0) + 1;
        denials.set(c.card.key, n);
        if (n === DENIALS) toast(`Further changes by scripts of “${c.card.name}” are denied until the page is reloaded.`, 'info');
      }
      return yes;
    });
    asked.set(key, asking);
  }
  return asking;
}

/** The open question of each card and operation. @type {Map<string, Promise<boolean>>} */
const asked = new Map();

/** What a question says a call would do, by operation. @param {string} tool */
function doing(tool) {
  const m = /^tavo_([a-z]+)_([a-z_]+)$/.exec(tool);
  if (!m) return tool;
  const noun = m[1] === 'regex' ? 'a regex group' : `a ${m[1]}`;
  return `${m[2].replace('_', ' ')} ${noun}`;
}

/** Drops `undefined` fields (the operations' schemas are strict). @param {Record<string, any>} o */
function defined(o) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/** @param {any} v @param {string} what */
function plainObject(v, what) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what} must be an object`);
  return v;
}

/**
 * One operation call for a caller's chat; one the seed marks (or the policy sets to ask)
 * asks first and answers `{denied: true}` when the user says no.
 * @param {Caller} c @param {string} tool @param {any} args @param {string} [what]
 */
async function call(c, tool, args, what) {
  if (SEED_ASKS.has(tool) || (await policyAsks(c, tool))) {
    if (!(await allowed(c, what || doing(tool), tool))) return { denied: true };
  }
  // Asked when the seed or the user's policy says so, and not otherwise: the operation's own
  // confirmation (a model's call pauses on it) is this door's question or none. A `deny` in
  // the policy still refuses on the server.
  return { value: await op(tool, args, { chat: c.chatId, confirm: true }) };
}

/**
 * The error a script sees: the server's words and its stable `code` (`permission_denied`,
 * `resource_not_found`, …), so `catch (e) { if (e.code === 'permission_denied') … }` works
 * in the frame. @param {unknown} e
 */
export function scriptError(e) {
  const err = /** @type {Error & {code?: string}} */ (new Error(e instanceof Error ? e.message : String(e)));
  if (e instanceof ApiError && e.code) err.code = e.code;
  return err;
}

/**
 * A call whose failure is a soft value (`null`, `false`, `[]`), as the seed writes for a miss.
 * A refusal by the user's approval policy is no miss: it throws, with its code, as do server
 * failures. @param {Promise<{value?: any, denied?: boolean}>} p @param {(v: any) => any} pick @param {any} soft
 */
async function soft(p, pick, soft) {
  try {
    const r = await p;
    return r.denied ? soft : pick(r.value);
  } catch (e) {
    if (e instanceof ApiError && (e.status >= 500 || e.code === 'permission_denied')) throw scriptError(e);
    return soft;
  }
}

/** A call that throws the server's words (and code) on failure and answers `null` when denied. @param {Promise<{value?: any, denied?: boolean}>} p @param {(v: any) => any} pick */
async function strict(p, pick) {
  try {
    const r = await p;
    return r.denied ? null : pick(r.value);
  } catch (e) {
    throw scriptError(e);
  }
}

/** `12` or `{id: 12}` → 12. @param {any} ref @param {string} what */
function idOf(ref, what) {
  const id = ref !== null && typeof ref === 'object' ? ref.id : ref;
  if (!Number.isInteger(id) || id <= 0) throw new Error(`${what} needs an id (a positive integer or an object with id)`);
  return id;
}

/** @param {string} name @param {(c: Caller, args: any[]) => Promise<any>} f */
const def = (name, f) => METHODS.set(name, f);

// ---- variables (the frame keeps a snapshot for synchronous reads; writes land here) --------

for (const m of ['set', 'update', 'unset']) {
  def(`variable.${m}`, async (c, [arg]) => {
    const a = plainObject(arg, 'the variable call');
    const r = await op(`tavo_variable_${m}`, defined({ name: a.name, value: a.value, scope: a.scope, message: a.message }), { chat: c.chatId });
    c.varsChanged();
    return r;
  });
}

// ---- messages ----------------------------------------------------------------------------

/** @param {any} m */
const messageOut = (m) => (m ? defined({ id: m.id, characterId: m.characterId, content: m.content, hidden: !!m.hidden, role: m.role, reasoning: m.reasoning }) : null);

def('message.find', (c, [range, filter]) =>
  soft(call(c, 'tavo_message_find', defined({ indexRange: range ?? undefined, filter: filter ?? undefined })), (list) => (list || []).map(messageOut), []));
def('message.get', async (c, [ref]) => {
  if (ref && typeof ref === 'object' && Number.isInteger(ref.index)) {
    const list = await soft(call(c, 'tavo_message_find', { indexRange: ref.index }), (l) => l || [], []);
    return list[0] ? messageOut(list[0]) : null;
  }
  if (!Number.isInteger(ref) && !(ref && Number.isInteger(ref.id))) return null;
  return soft(call(c, 'tavo_message_get', { id: ref && typeof ref === 'object' ? ref.id : ref }), messageOut, null);
});
// A frame without a message (a plugin's entry, a /chat fragment) has no current message.
def('message.current', async (c) => (c.messageId ? soft(call(c, 'tavo_message_get', { id: c.messageId }), messageOut, null) : null));
def('message.count', (c) => strict(call(c, 'tavo_message_count', {}), (r) => r.count));
def('message.append', async (c, [m]) => {
  const msg = plainObject(m, 'tavo.message.append(message)');
  const id = await soft(
    call(c, 'tavo_message_append', { message: defined({ content: msg.content, role: msg.role, characterId: msg.characterId, hidden: msg.hidden }) }),
    (r) => r.id, null);
  if (id != null) refreshTail().catch(() => {});
  return id;
});
def('message.update', async (c, [m, opts]) => {
  const msg = plainObject(m, 'tavo.message.update(message)');
  // The seed: `hidden` left out means visible.
  const edit = defined({ id: msg.id, content: msg.content, reasoning: msg.reasoning, hidden: !!msg.hidden });
  if (opts && opts.reuseContext === true && msg.id === c.messageId) c.keep(msg.id);
  const id = await soft(call(c, 'tavo_message_update', { message: edit }), (r) => r.id, null);
  if (id != null) refreshTail().catch(() => {});
  return id;
});
def('message.delete', async (c, [ref]) => {
  const id = await soft(call(c, 'tavo_message_delete', { id: idOf(ref, 'tavo.message.delete') }, 'delete a message'), (r) => r.id, null);
  if (id != null) refreshTail().catch(() => {});
  return id;
});

// ---- the chat ----------------------------------------------------------------------------

def('chat.current', (c) => soft(call(c, 'tavo_chat_current', {}), (chat) => chat, null));
def('chat.update', async (c, [patch]) => {
  const p = plainObject(patch, 'tavo.chat.update(chat)');
  // The seed's fields only: this door rebinds no preset, lorebook or regex group.
  const change = defined({ name: p.name, characters: p.characters, persona: p.persona, background: p.background });
  if (chatView.id.value === c.chatId) {
    await updateChat(change).catch((e) => { throw scriptError(e); });
    return chatView.chat.value;
  }
  return strict(call(c, 'tavo_chat_update', { chat: change }), (chat) => chat);
});

// ---- the library -------------------------------------------------------------------------

/** @type {Record<string, {field: string, imported: (r: any) => any}>} */
const KINDS = {
  character: { field: 'card', imported: (r) => ({ characterId: r.characterId, lorebookId: r.lorebookId ?? null, regexId: r.regexId ?? null }) },
  persona: { field: '', imported: () => null },
  preset: { field: 'preset', imported: (r) => r.presetId ?? null },
  lorebook: { field: 'lorebook', imported: (r) => r.lorebookId ?? null },
  regex: { field: 'regex', imported: (r) => r.regexId ?? null },
};

for (const [kind, k] of Object.entries(KINDS)) {
  const t = (/** @type {string} */ m) => `tavo_${kind}_${m}`;
  def(`${kind}.all`, (c) => strict(call(c, t('all'), {}), (list) => list));
  def(`${kind}.get`, (c, [ref]) => {
    if (!(Number.isInteger(ref) || (ref && Number.isInteger(ref.id)))) return Promise.resolve(null);
    return soft(call(c, t('get'), { id: idOf(ref, `tavo.${kind}.get`) }), (v) => v, null);
  });
  def(`${kind}.find`, (c, [name, options]) =>
    strict(call(c, t('find'), defined({ name: String(name ?? ''), options: options && options.match ? { match: options.match } : undefined })), (list) => list));
  def(`${kind}.create`, (c, [obj]) => {
    const o = plainObject(obj, `tavo.${kind}.create`);
    // A whole CCv3 card (`{spec, data}`, or data with a character_book), as the seed's generate
    // demo makes one, is an import: its lorebook comes along; the answer is still the new id.
    if (kind === 'character' && ('spec' in o || 'data' in o || 'character_book' in o)) {
      return strict(call(c, t('import'), { card: o }, 'import a character'), (r) => r.characterId);
    }
    return strict(call(c, t('create'), { [kind]: o }, `create a ${kind}`), (r) => r.id);
  });
  def(`${kind}.update`, (c, [obj]) => strict(call(c, t('update'), { [kind]: plainObject(obj, `tavo.${kind}.update`) }, `overwrite a ${kind}`), (r) => r.id));
  def(`${kind}.delete`, (c, [ref]) => strict(call(c, t('delete'), { id: idOf(ref, `tavo.${kind}.delete`) }, `delete a ${kind}`), (r) => r.id));
  if (k.field) def(`${kind}.import`, (c, [obj]) => strict(call(c, t('import'), { [k.field]: plainObject(obj, `tavo.${kind}.import`) }, `import a ${kind}`), k.imported));
}

// ---- memory --------------------------------------------------------------------------------

def('memory.current', (c) => strict(call(c, 'tavo_memory_get', {}), (m) => m));
def('memory.update', (c, [m]) => {
  const patch = plainObject(m, 'tavo.memory.update(memory)');
  return strict(call(c, 'tavo_memory_update', { memory: defined({ enabled: patch.enabled, memories: patch.memories }) }), (r) => r);
});
def('memory.append', (c, [texts]) => {
  const list = Array.isArray(texts) ? texts.map(String) : [String(texts ?? '')];
  return strict(call(c, 'tavo_memory_append', { memories: list }), (r) => r);
});
// Tavo's "extract now": one request on the chat's model; resolves to {memory, added, duplicates, messages, mergedWithEdit}.
def('memory.extract', (c) => strict(call(c, 'tavo_memory_extract', {}), (r) => r));

// ---- files -------------------------------------------------------------------------------

/** @param {any} o @param {string[]} keys */
const options = (o, keys) => (o && typeof o === 'object' ? defined(Object.fromEntries(keys.map((k) => [k, o[k]]))) : undefined);

/** Tells the frame the signed URL of a file it just stored (`tavo.file.url` is synchronous). @param {Caller} c @param {any} path */
async function saved(c, path) {
  const m = /^files\/(chat|global)\/(.+)$/.exec(String(path || ''));
  if (m && c.fileSaved) await c.fileSaved(m[1], m[2]);
  return path;
}
// Without an encoding TavoJS detects it (seed 002): a `data:` URL is decoded, an http(s) URL
// downloaded into storage, anything else stored as text — the operation's `auto`. (The model's
// tavo_file_save stores text unless told otherwise, seed 000.)
def('file.save', async (c, [name, content, opts]) => {
  const text = String(content ?? '');
  const o = /** @type {Record<string, any>} */ (options(opts, ['scope', 'encoding']) || {});
  if (o.encoding === undefined) o.encoding = 'auto';
  return saved(c, await strict(call(c, 'tavo_file_save', defined({ name: String(name ?? ''), content: text, options: o })), (r) => r.path));
});
def('file.load', (c, [name, opts]) =>
  soft(call(c, 'tavo_file_load', defined({ name: String(name ?? ''), options: options(opts, ['scope', 'encoding']) })), (r) => r.content, null));
def('file.delete', async (c, [name, opts]) => {
  await soft(call(c, 'tavo_file_delete', defined({ name: String(name ?? ''), options: options(opts, ['scope']) })), () => null, null);
});
def('file.exists', (c, [name, opts]) =>
  soft(call(c, 'tavo_file_exists', defined({ name: String(name ?? ''), options: options(opts, ['scope']) })), (r) => !!r.exists, false));

// ---- the composer ------------------------------------------------------------------------

/** @param {Caller} c */
function openHere(c) {
  if (chatView.id.value !== c.chatId) throw new Error('the composer belongs to another chat');
}
def('input.get', async (c) => (openHere(c), chatView.draft.value));
def('input.set', async (c, [text]) => { openHere(c); setDraft(String(text ?? '')); });
def('input.append', async (c, [text]) => { openHere(c); setDraft(chatView.draft.value + String(text ?? '')); });
def('input.clear', async (c) => { openHere(c); setDraft(''); });
def('input.send', async (c) => {
  openHere(c);
  const text = chatView.draft.value.trim();
  const r = currentReply.value;
  if (r && r.status.value !== 'finished' && !r.error.value) return { ok: false, reason: 'busy', text };
  if (!text) return { ok: false, reason: 'rejected', text, message: 'the input is empty' };
  try {
    // Through the input hooks, as the Send button (Tavo: `source: 'tavojs'`).
    return await sendInput(text, 'tavojs');
  } catch (e) {
    return { ok: false, reason: e instanceof ApiError && e.code === 'busy' ? 'busy' : 'rejected', text, message: e instanceof Error ? e.message : String(e) };
  }
});

// ---- generation (seed 002 "生成请求"): one request on the chat's connection, nothing stored ----

def('generate', async (c, [prompt, opts]) => {
  if (typeof prompt !== 'string' || !prompt.trim()) throw new Error('tavo.generate needs a prompt (a non-empty string)');
  const o = opts == null ? {} : plainObject(opts, 'tavo.generate options');
  const options = defined({
    context: o.context === undefined ? undefined : !!o.context,
    preset: o.preset == null ? undefined : typeof o.preset === 'object' ? { id: o.preset.id } : o.preset,
    settings: o.settings == null ? undefined : plainObject(o.settings, 'tavo.generate options.settings'),
  });
  try {
    const r = await post(`/api/chats/${c.chatId}/generate`, { prompt, options });
    return String(r.text ?? '');
  } catch (e) {
    // The seed: a chat without a usable API throws (scripts catch it).
    throw new Error(e instanceof Error ? e.message : String(e));
  }
});

// ---- SillyTavern compatibility: triggerSlash and the TavernHelper shim's reads ----------------

/** Runs a method of this table for a caller (slash commands reuse the bridge's own rules). @param {Caller} c @param {string} method @param {any[]} args */
function invoke(c, method, args) {
  const f = METHODS.get(method);
  if (!f) throw new Error(`${method} is not a TavoJS method`);
  return f(c, args);
}

def('triggerSlash', async (c, [line]) => {
  let wrote = false;
  const env = {
    /** @param {string} method @param {any[]} args */
    invoke: (method, args) => {
      if (method.startsWith('variable.')) wrote = true;
      return invoke(c, method, args);
    },
    vars: () => get(`/api/chats/${c.chatId}/variables`),
    // SillyTavern's /trigger: a reply to the chat as it is, as sending would start one.
    trigger: async () => {
      const r = currentReply.value;
      if (chatView.id.value === c.chatId && r && r.status.value !== 'finished' && !r.error.value) throw new Error('/trigger: a reply is already running');
      let answer;
      try {
        answer = await post(`/api/chats/${c.chatId}/replies`, { type: 'normal' });
      } catch (e) {
        throw new Error(`/trigger: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (chatView.id.value === c.chatId && answer && answer.replyId) followReply(c.chatId, answer.replyId);
    },
  };
  try {
    return await runSlash(line, env);
  } finally {
    // The frame reads variables synchronously: its snapshot is fresh before the answer.
    if (wrote && c.refreshVars) await c.refreshVars().catch(() => {});
  }
});

/** Messages by floor for the TavernHelper shim: `{id, floor, role, name, content, hidden, characterId}`. */
def('compat.messages', async (c, [range, filter]) => {
  const list = await soft(call(c, 'tavo_message_find', defined({ indexRange: range ?? undefined, filter: filter ?? undefined })), (l) => l || [], []);
  const chat = chatView.id.value === c.chatId ? chatView.chat.value : await soft(call(c, 'tavo_chat_current', {}), (x) => x, null);
  const names = new Map((chat?.characters || []).map((/** @type {any} */ x) => [x.id, x.name]));
  const user = chat?.persona?.name || 'User';
  return list.map((/** @type {any} */ m) => ({
    ...messageOut(m),
    floor: m.floor,
    name: m.role === 'user' ? user : m.role === 'system' ? 'system' : names.get(m.characterId) || '',
  }));
});

// ---- images and speech (seed 002 "生图", "TTS"): the chat's image connection and voice bindings ----

const IMAGE_OPTIONS = ['size', 'aspectRatio', 'negativePrompt', 'referenceImages', 'extraBody', 'saveAs', 'scope'];

def('image.generate', async (c, [prompt, opts]) => {
  if (typeof prompt !== 'string' || !prompt.trim()) throw new Error('tavo.image.generate needs a prompt (a non-empty string)');
  const o = opts == null ? undefined : options(plainObject(opts, 'tavo.image.generate options'), IMAGE_OPTIONS);
  let r;
  try {
    // No confirmation (the seed); nothing is stored without saveAs.
    r = await post('/api/images/generate', defined({ prompt, chatId: c.chatId, options: o && Object.keys(o).length ? o : undefined }));
  } catch (e) {
    // The seed: a chat without a usable image API throws.
    throw new Error(e instanceof Error ? e.message : String(e));
  }
  if (typeof r.path === 'string') return saved(c, r.path);
  return String(r.dataUrl ?? '');
});

/** `123`, `{id: 123}` → the id the voice route takes. @param {any} v */
const voiceRef = (v) => (v !== null && typeof v === 'object' ? v.id : v);

def('tts.play', async (c, [text, opts]) => {
  const t = typeof text === 'string' ? text : text == null ? '' : String(text);
  if (!t.trim()) return false;
  const o = opts !== null && typeof opts === 'object' ? opts : {};
  /** @type {any} */
  let voice;
  if (o.voice != null) {
    const v = plainObject(o.voice, 'tavo.tts.play voice');
    if ((v.character != null) === (v.persona != null)) throw new Error('tavo.tts.play: voice takes exactly one of character and persona');
    voice = v.character != null ? { character: voiceRef(v.character) } : { persona: voiceRef(v.persona) };
  } else if (!c.messageId) {
    // A plugin's code has no host message: it must name the voice (the seed).
    return false;
  }
  try {
    const r = await post(`/api/chats/${c.chatId}/tts/play`, defined({
      text: t,
      voice,
      // Without a voice, the host message's speaker's binding.
      messageId: voice ? undefined : c.messageId,
      queue: !!o.queue,
      applyPlaybackRules: !!o.applyPlaybackRules,
    }));
    return !!r.playing;
  } catch (e) {
    // A target that does not exist is a soft false; a bad argument or a provider failure throws.
    if (e instanceof ApiError && e.status === 404) return false;
    throw new Error(e instanceof Error ? e.message : String(e));
  }
});
def('tts.stop', async (c) => {
  await post(`/api/chats/${c.chatId}/tts/stop`).catch((e) => { throw new Error(e instanceof Error ? e.message : String(e)); });
});

// ---- utilities ---------------------------------------------------------------------------

/** A frame's image address in the app: `files/…` virtual paths, data: URLs, http(s). @param {Caller} c @param {string} src */
function imageUrl(c, src) {
  if (/^files\/(chat|global)\/[^/\\:]+$/.test(src) && !src.includes('..')) return `/api/chats/${c.chatId}/${src}`;
  if (/^data:image\//i.test(src) || /^https?:\/\//i.test(src)) return src;
  throw new Error('tavo.utils.preview takes a data:image URL, an http(s) URL or a files/… path');
}

def('utils.toast', async (_c, [text]) => { toast(String(text ?? '').slice(0, 500)); });
/** A question a frame asks the user (a picker, leaving for a URL): one at a time per frame, and
 * a frame whose questions were cancelled three times asks no more (answers null), so a script
 * cannot keep the app behind modal dialogs. @param {Caller} c @param {import('../store.js').BubbleAsk} ask */
async function askUser(c, ask) {
  if (c.dialogs.open > 0 || c.dialogs.cancelled >= 3) return null;
  c.dialogs.open++;
  try {
    const v = await askBubble(ask);
    if (v === null || v === false || v === undefined) c.dialogs.cancelled++;
    return v;
  } finally {
    c.dialogs.open--;
  }
}

def('utils.openUrl', async (c, [url]) => {
  const u = String(url ?? '');
  if (!/^https?:\/\//i.test(u)) throw new Error('tavo.utils.openUrl opens http(s) addresses only');
  const yes = await askUser(c, { kind: 'confirm', title: 'Open a web page?', text: `A script of “${c.card.name}” wants to open ${u.slice(0, 300)} in a new tab.` });
  if (yes) window.open(u, '_blank', 'noopener,noreferrer');
  return !!yes;
});
def('utils.export', async (_c, [name, data]) => {
  const file = String(name ?? 'export').replace(/[/\\:]/g, '_').slice(0, 120) || 'export';
  const text = String(data ?? '');
  /** @type {Blob} */
  let blob;
  if (text.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    blob = new Blob([bytes]);
  } else blob = new Blob([text], { type: 'text/plain;charset=utf-8' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = file;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
});
def('utils.preview', async (c, [src]) => {
  if (typeof src !== 'string' || !src) throw new Error('tavo.utils.preview needs a non-empty src');
  askBubble({ kind: 'preview', src: imageUrl(c, src) });
});
def('utils.select', async (c, [list, title, defaultValue]) => {
  if (!Array.isArray(list) || !list.length) throw new Error('tavo.utils.select needs a non-empty array of options');
  const opts = list.slice(0, 200).map((o) =>
    typeof o === 'string' ? { value: o, label: o } : { value: String(o?.value ?? ''), label: String(o?.label ?? o?.value ?? ''), description: o?.description ? String(o.description) : undefined, subtitle: o?.subtitle ? String(o.subtitle) : undefined });
  const v = await askUser(c, { kind: 'select', title: title ? String(title) : 'Choose', options: opts, defaultValue: defaultValue == null ? undefined : String(defaultValue) });
  return v ?? null;
});

// ---- the app -----------------------------------------------------------------------------

// The seed's `app.version()` is the Tavo release a script runs in (`0.77.0` → 770), which
// scripts gate features on; tavo answers the Tavo version whose contracts it implements (the
// server's `tavoVersion`), not its own crate version.
/** @type {Promise<string> | null} */
let version = null;
const appVersion = () => (version ||= get('/api/health').then((h) => String(h.tavoVersion || '0.0.0')));
def('app.version', () => appVersion());
def('app.versionNumber', async () => {
  const [a, b, c] = (await appVersion()).split('.').map((n) => parseInt(n, 10) || 0);
  return a * 1000 + b * 10 + c;
});
