// All the app's state, as signals, in one place; components read them and call the actions
// below. Nothing here decides anything the server decides: each action is one or two calls of
// the HTTP API.

import { signal, batch } from '@preact/signals';
import { get, post, put, del, op, importFiles, followSse, ApiError, setUnauthorizedHandler } from './api.js';
import { followCurrentTheme } from './themeCss.js';

/**
 * @typedef {{id: number, name: string, revision: number, avatar?: string, createdAt: string, updatedAt: string}} Summary
 * @typedef {{callId: string, tool: string, status: string, label?: string, errorCode?: string, truncated?: boolean, displayName?: string}} ToolCard
 * @typedef {{id: number, floor: number, role: string, content: string, reasoning?: string, hidden: boolean,
 *   name?: string, characterId?: number, swipes?: string[], swipeId?: number, toolCalls?: ToolCard[], sendDate?: string,
 *   display?: {content: string, reasoning?: string}, translation?: {language: string, text: string}}} Message
 *   `display` is the copy shown (macros expanded, the chat's display regex rules applied by the server).
 * @typedef {{id: number, name: string, revision: number, characters: {id: number, name: string}[],
 *   persona?: {id: number, name: string} | null, replyMode?: string, mutedCharacterIds?: number[]}} Chat
 *   A chat with several characters is a group chat: `replyMode` decides who answers, muted members never do
 *   unless chosen as the reply's speaker.
 * @typedef {{pendingId: number, interaction: 'confirmation'|'question', tool: string, callId: string,
 *   safety?: string, arguments?: any, question?: {question: string, options: {value: string, label: string, description?: string, meta?: string}[],
 *   allowOther: boolean, defaultValue?: string, placeholder?: string}}} Pending
 */

// ---- session ------------------------------------------------------------------------------

/** 'checking' | 'login' | 'ready' */
export const session = signal(/** @type {'checking'|'login'|'ready'} */ ('checking'));
export const authRequired = signal(false);
/** Whether the server has accounts (`tavo serve --accounts`): the login asks a name and a password. */
export const accountsMode = signal(false);
/** The user logged in on a server with accounts. @type {import('@preact/signals').Signal<{id: number, name: string, admin: boolean}|null>} */
export const currentUser = signal(/** @type {{id: number, name: string, admin: boolean}|null} */ (null));

setUnauthorizedHandler(() => {
  session.value = 'login';
});

export async function checkSession() {
  try {
    const health = await get('/api/health');
    authRequired.value = !!health.authRequired;
    accountsMode.value = !!health.accounts;
    if (health.accounts) {
      // Whose session the cookie holds (401: none).
      currentUser.value = (await get('/api/session')).user;
    } else if (health.authRequired) {
      // Whether the session cookie is still good.
      await get('/api/replies');
    }
    session.value = 'ready';
    startGlobalEvents();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) session.value = 'login';
    else {
      session.value = 'ready';
      toast(errorText(e), 'error');
    }
  }
}

/**
 * Logs in with the access token, or on a server with accounts with a name and a password.
 * @param {string | {name: string, password: string}} credentials
 */
export async function login(credentials) {
  if (typeof credentials === 'string') {
    await post('/api/session', { token: credentials });
  } else {
    currentUser.value = (await post('/api/session', credentials)).user;
  }
  session.value = 'ready';
  startGlobalEvents();
}

/** Logs this browser out, or with `everywhere` every session of the user. */
export async function logout(everywhere = false) {
  await del(everywhere ? '/api/session?everywhere=true' : '/api/session');
  currentUser.value = null;
  session.value = 'login';
}

// ---- toasts -------------------------------------------------------------------------------

/** @type {import('@preact/signals').Signal<{id: number, text: string, kind: string}[]>} */
export const toasts = signal([]);
let toastId = 0;

/** @param {string} text @param {'info'|'error'|'ok'} [kind] */
export function toast(text, kind = 'info') {
  const id = ++toastId;
  toasts.value = [...toasts.value, { id, text, kind }].slice(-4);
  setTimeout(() => dismiss(id), kind === 'error' ? 8000 : 4000);
}

/** @param {number} id */
export function dismiss(id) {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}

/** Words for an error, as the CLI shows them. @param {any} e */
export function errorText(e) {
  if (e instanceof ApiError) return e.message;
  return String(e && e.message ? e.message : e);
}

// ---- library ------------------------------------------------------------------------------

/** @type {import('@preact/signals').Signal<Summary[] | null>} */
export const characters = signal(null);
/** @type {import('@preact/signals').Signal<Summary[] | null>} */
export const personas = signal(null);
/** The last import's per-file results. @type {import('@preact/signals').Signal<any[] | null>} */
export const importResults = signal(null);
export const importing = signal(false);

export async function loadCharacters() {
  try {
    characters.value = await get('/api/library/character');
  } catch (e) {
    toast(errorText(e), 'error');
    if (characters.value === null) characters.value = [];
  }
}

export async function loadPersonas() {
  try {
    personas.value = await get('/api/library/persona');
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** @param {File[]} files */
export async function importAll(files) {
  if (!files.length) return;
  importing.value = true;
  try {
    const answer = await importFiles(files);
    importResults.value = answer.results;
    toast(`${answer.imported} imported, ${answer.failed} failed`, answer.failed ? 'error' : 'ok');
    await loadCharacters();
  } catch (e) {
    toast(errorText(e), 'error');
  } finally {
    importing.value = false;
  }
}

/** @param {string} kind @param {number} id */
export async function deleteAsset(kind, id) {
  await del(`/api/library/${kind}/${id}`);
  if (kind === 'character') await loadCharacters();
  if (kind === 'persona') await loadPersonas();
}

/** @param {{name: string, description?: string, firstMes?: string, personality?: string, scenario?: string}} fields */
export async function createCharacter(fields) {
  const answer = await post('/api/library/character', fields);
  await loadCharacters();
  return /** @type {number} */ (answer.id);
}

/** @param {{name: string, description?: string}} fields */
export async function createPersona(fields) {
  const answer = await post('/api/library/persona', fields);
  await loadPersonas();
  return /** @type {number} */ (answer.id);
}

/** Makes one persona the default (`active`): the library keeps one default, so the others stop
 * being it. The write carries the revision it read. @param {number} id */
export async function setDefaultPersona(id) {
  const full = await get(`/api/library/persona/${id}`);
  if (!full.active) await put(`/api/library/persona/${id}`, { ...full, active: true });
  await loadPersonas();
}

/** @param {{characters: number[], name?: string, persona?: number}} spec @returns {Promise<number>} */
export async function createChat(spec) {
  const answer = await post('/api/chats', spec);
  return answer.id;
}

// ---- live replies everywhere (badges) -----------------------------------------------------

/** chatId → {replyId, status, pendingId?}. @type {import('@preact/signals').Signal<Record<number, {replyId: string, status: string, pendingId?: number}>>} */
export const liveReplies = signal({});
/** Bumped on `library` events, so screens that show the library re-read it. */
export const libraryTick = signal(0);
/** Other modules' listeners of `library` events (the plugins' runtime list). @type {Set<(data: any) => void>} */
export const libraryListeners = new Set();

// ---- text-to-speech: the server synthesizes and publishes `tts` events; TtsPlayer.js plays ----

/** Listeners of `tts` events (`{chatId, action: 'play'|'stop', url?, queue?}`). @type {Set<(data: any) => void>} */
export const ttsListeners = new Set();
/** Listeners of `reply` status events (the player's auto-play). @type {Set<(data: any) => void>} */
export const replyListeners = new Set();
/**
 * The open chat's speech: the URL playing, what waits (the chat's one shared queue), the last
 * URL played, and whether it goes on while the page is hidden (`tts.backgroundPlayback`).
 */
export const tts = {
  playing: signal(/** @type {string|null} */ (null)),
  queue: signal(/** @type {string[]} */ ([])),
  last: signal(/** @type {string|null} */ (null)),
  background: signal(true),
};
/** Speaks in a chat (`{text?, messageId?, voice?, queue?, applyPlaybackRules?}`) → `{playing, reason?, audio?}`. @param {number} chatId @param {any} body */
export function speak(chatId, body) {
  return post(`/api/chats/${chatId}/tts/play`, body);
}
/** Stops the chat's speech in every open page. @param {number} chatId */
export function stopSpeaking(chatId) {
  return post(`/api/chats/${chatId}/tts/stop`, {});
}

let globalAbort = /** @type {AbortController | null} */ (null);

function startGlobalEvents() {
  if (globalAbort) return;
  globalAbort = new AbortController();
  loadRendering();
  get('/api/replies')
    .then((list) => {
      /** @type {Record<number, any>} */
      const map = {};
      for (const r of list) map[r.chatId] = { replyId: r.replyId, status: r.status, pendingId: r.pending?.pendingId };
      liveReplies.value = map;
    })
    .catch(() => {});
  followSse('/api/events', {
    signal: globalAbort.signal,
    onEvent(ev) {
      if (ev.event === 'reply') {
        const d = ev.data;
        for (const f of replyListeners) f(d);
        const next = { ...liveReplies.value };
        if (d.status === 'running' || d.status === 'waiting') {
          next[d.chatId] = { replyId: d.replyId, status: d.status, pendingId: d.pendingId };
        } else delete next[d.chatId];
        liveReplies.value = next;
        // A reply of the open chat that another door started (another tab, the CLI, MCP, a
        // model's tool): shown as it streams, or — already over — by its stored message.
        if (d.chatId === chatView.id.value && !replies.has(d.chatId) && chatView.chat.value) {
          if (d.status === 'running' || d.status === 'waiting') resumeReply(d.chatId).catch(() => {});
          else refreshTail().catch(() => {});
        }
      } else if (ev.event === 'library') {
        libraryTick.value++;
        for (const f of libraryListeners) f(ev.data);
        if (ev.data.kind === 'character') loadCharacters();
        // A setting changed, or a theme tool ran (its `apply` rebinds the current theme).
        if (ev.data.kind === 'setting' || (ev.data.kind === 'operation' && /^theme\./.test(String(ev.data.action || '')))) loadRendering();
      } else if (ev.event === 'tts') {
        for (const f of ttsListeners) f(ev.data);
      } else if (ev.event === 'reload') {
        libraryTick.value++;
      }
    },
  }).catch(() => {
    globalAbort = null;
  });
}

// ---- the open chat ------------------------------------------------------------------------

export const PAGE = 50;

/**
 * The chat on screen: its object, the loaded messages (a contiguous tail of the chat, grown
 * page by page towards the start), and whether older ones exist.
 */
export const chatView = {
  id: signal(/** @type {number|null} */ (null)),
  chat: signal(/** @type {Chat|null} */ (null)),
  messages: signal(/** @type {Message[]} */ ([])),
  total: signal(0),
  hasMore: signal(false),
  loadingOlder: signal(false),
  error: signal(/** @type {string|null} */ (null)),
  /** The composer's text (impersonate fills it). */
  draft: signal(''),
  /** Display regex rules bound to the chat: when 0 a streamed reply is shown as it arrives. */
  displayRules: signal(0),
  /** Group chats: the member chosen to answer the next message ("Reply as"), else the reply mode decides. */
  speaker: signal(/** @type {number|null} */ (null)),
  /** The image the next message carries (`attachment.js`): saved as a chat file already. */
  attachment: signal(/** @type {Attachment|null} */ (null)),
};

/** @typedef {{path: string, name: string, url: string}} Attachment */

/** The page of messages as shown: every message carries its `display` copy. @param {number} id @param {string} [query] */
const viewPage = (id, query = '') => get(`/api/chats/${id}/view?limit=${PAGE}${query}`);

/** @param {number} id */
export async function openChat(id) {
  batch(() => {
    chatView.id.value = id;
    chatView.chat.value = null;
    chatView.messages.value = [];
    chatView.error.value = null;
    chatView.draft.value = drafts.get(id) || '';
    chatView.attachment.value = attachments.get(id) || null;
    chatView.speaker.value = null;
    // A reply this page already follows shows at once (Stop, not Send), before any request.
    currentReply.value = replies.get(id) || null;
  });
  try {
    const [chat, page] = await Promise.all([get(`/api/library/chat/${id}`), viewPage(id)]);
    if (chatView.id.value !== id) return;
    batch(() => {
      chatView.chat.value = chat;
      chatView.messages.value = page.messages;
      chatView.total.value = page.total;
      chatView.hasMore.value = page.hasMore;
      chatView.displayRules.value = page.displayRules || 0;
    });
    resumeReply(id);
  } catch (e) {
    if (chatView.id.value === id) chatView.error.value = errorText(e);
  }
}

/** Drafts per chat, kept while the app is open. @type {Map<number, string>} */
const drafts = new Map();
/** @param {string} text */
export function setDraft(text) {
  chatView.draft.value = text;
  if (chatView.id.value != null) drafts.set(chatView.id.value, text);
}

/** Attached images per chat, kept like drafts. @type {Map<number, Attachment>} */
const attachments = new Map();
/** @param {Attachment|null} a */
export function setAttachment(a) {
  chatView.attachment.value = a;
  const id = chatView.id.value;
  if (id == null) return;
  if (a) attachments.set(id, a);
  else attachments.delete(id);
}

/** Re-reads the newest page and merges it over what is loaded. */
export async function refreshTail() {
  const id = chatView.id.value;
  if (id == null) return;
  const page = await viewPage(id);
  if (chatView.id.value !== id) return;
  const first = page.messages.length ? page.messages[0].floor : page.total;
  const keep = chatView.messages.value.filter((m) => m.floor < first);
  batch(() => {
    chatView.messages.value = [...keep, ...page.messages];
    chatView.total.value = page.total;
    chatView.displayRules.value = page.displayRules || 0;
    if (!keep.length) chatView.hasMore.value = page.hasMore;
  });
}

/** Loads the page before the first loaded message. */
export async function loadOlder() {
  const id = chatView.id.value;
  const msgs = chatView.messages.value;
  if (id == null || !chatView.hasMore.value || chatView.loadingOlder.value) return;
  const before = msgs.length ? msgs[0].floor : chatView.total.value;
  chatView.loadingOlder.value = true;
  try {
    const page = await get(`/api/chats/${id}/view?limit=${PAGE * 2}&before=${before}`);
    if (chatView.id.value !== id) return;
    batch(() => {
      chatView.messages.value = [...page.messages, ...chatView.messages.value];
      chatView.hasMore.value = page.hasMore;
    });
  } catch (e) {
    toast(errorText(e), 'error');
  } finally {
    chatView.loadingOlder.value = false;
  }
}

/** @param {Message} m @param {{content?: string, hidden?: boolean}} change */
export async function editMessage(m, change) {
  const id = chatView.id.value;
  if (id == null) return;
  await op(
    'tavo_message_update',
    { message: { id: m.id, content: change.content ?? m.content, hidden: change.hidden ?? m.hidden } },
    { chat: id },
  );
  await refreshTail();
  const content = change.content ?? m.content;
  const loaded = chatView.messages.value.find((x) => x.id === m.id);
  // Outside the re-read tail: ask for the new text's display copy.
  if (loaded && loaded.content !== content) replaceLoaded(m.id, { content, hidden: change.hidden ?? m.hidden, display: await displayOf({ ...m, content }) });
  else if (loaded) replaceLoaded(m.id, { hidden: change.hidden ?? m.hidden });
}

/**
 * Translates a message (`POST /api/messages/{id}/translate`: the chat's or the library's
 * language and connection) and shows the translation under it.
 * @param {Message} m
 */
export async function translateMessage(m) {
  const t = await post(`/api/messages/${m.id}/translate`, {});
  replaceLoaded(m.id, { translation: { language: t.language, text: t.text } });
}

/**
 * The display copy of a text as one of the open chat's messages (macros, display regex rules).
 * @param {{role: string, content: string, reasoning?: string, characterId?: number, id?: number}} m
 * @returns {Promise<{content: string, reasoning?: string}>}
 */
export async function displayOf(m) {
  const id = chatView.id.value;
  if (id == null) return { content: m.content, reasoning: m.reasoning };
  return post(`/api/chats/${id}/display`, {
    role: m.role, content: m.content, reasoning: m.reasoning ?? null, characterId: m.characterId ?? null, messageId: m.id ?? null,
  });
}

/** @param {number} messageId @param {Partial<Message>} fields */
function replaceLoaded(messageId, fields) {
  chatView.messages.value = chatView.messages.value.map((x) => (x.id === messageId ? { ...x, ...fields } : x));
}

/** @param {Message} m */
export async function deleteMessage(m) {
  const id = chatView.id.value;
  if (id == null) return;
  await op('tavo_message_delete', { id: m.id }, { chat: id, confirm: true });
  chatView.messages.value = chatView.messages.value.filter((x) => x.id !== m.id);
  await refreshTail();
}

/** @param {Message} m @param {number} index */
export async function chooseSwipe(m, index) {
  const id = chatView.id.value;
  if (id == null) return;
  const updated = await put(`/api/chats/${id}/messages/${m.id}/swipe`, { index });
  replaceLoaded(m.id, { ...updated, display: await displayOf(updated) });
}

/** @param {string} name */
export async function renameChat(name) {
  const chat = chatView.chat.value;
  if (!chat) return;
  const full = await get(`/api/library/chat/${chat.id}`);
  const written = await put(`/api/library/chat/${chat.id}`, { ...full, name });
  chatView.chat.value = { ...full, name, revision: written.revision };
}

/**
 * Changes the open chat's bindings or members with `tavo_chat_update` (only the fields named;
 * every id is checked by the server in one transaction), then re-reads the chat and the newest
 * page: display copies depend on the persona, the members and the regex groups.
 * @param {Record<string, any>} change
 */
export async function updateChat(change) {
  const id = chatView.id.value;
  if (id == null) return;
  await op('tavo_chat_update', { chat: change }, { chat: id });
  const [chat, page] = await Promise.all([get(`/api/library/chat/${id}`), viewPage(id)]);
  if (chatView.id.value !== id) return;
  batch(() => {
    chatView.chat.value = chat;
    chatView.messages.value = page.messages;
    chatView.total.value = page.total;
    chatView.hasMore.value = page.hasMore;
    chatView.displayRules.value = page.displayRules || 0;
  });
  libraryTick.value++;
}

/**
 * Mutes or unmutes a member of the open group chat (`PUT /api/chats/{id}/members/{character}`).
 * @param {number} character @param {boolean} muted
 */
export async function setMemberMuted(character, muted) {
  const id = chatView.id.value;
  if (id == null) return;
  const chat = await put(`/api/chats/${id}/members/${character}`, { muted });
  if (chatView.id.value === id && chatView.chat.value) {
    chatView.chat.value = { ...chatView.chat.value, mutedCharacterIds: chat.mutedCharacterIds || [], revision: chat.revision ?? chatView.chat.value.revision };
  }
}

/** Copies the open chat with its messages; answers the copy's id. @returns {Promise<number>} */
export async function cloneChat() {
  const id = chatView.id.value;
  if (id == null) throw new Error('no chat is open');
  const answer = await post(`/api/chats/${id}/clone`, {});
  return answer.id;
}

// ---- replies ------------------------------------------------------------------------------

/**
 * What the page knows of one reply, built from its event stream only.
 * @typedef {{
 *   replyId: string, chatId: number, kind: string,
 *   messageId: import('@preact/signals').Signal<number|null>,
 *   text: import('@preact/signals').Signal<string>,
 *   reasoning: import('@preact/signals').Signal<string>,
 *   tools: import('@preact/signals').Signal<ToolCard[]>,
 *   pending: import('@preact/signals').Signal<Pending|null>,
 *   status: import('@preact/signals').Signal<string>,
 *   warnings: import('@preact/signals').Signal<string[]>,
 *   error: import('@preact/signals').Signal<string|null>,
 *   shown: import('@preact/signals').Signal<{source: string, copy: string} | null>,
 *   speaker: import('@preact/signals').Signal<{characterId?: number, name?: string, turn?: number, turns?: number} | null>,
 *   base: string, lastSeq: string|null, abort: AbortController | null,
 * }} ReplyState
 */

/** The reply of each chat the page follows (kept when the user switches chats). @type {Map<number, ReplyState>} */
const replies = new Map();
/** The open chat's reply. @type {import('@preact/signals').Signal<ReplyState|null>} */
export const currentReply = signal(null);

/** @param {number} chatId @param {string} replyId @param {string} kind @param {string} [base] @returns {ReplyState} */
function newReply(chatId, replyId, kind, base = '') {
  return {
    replyId,
    chatId,
    kind,
    messageId: signal(null),
    text: signal(''),
    reasoning: signal(''),
    tools: signal([]),
    pending: signal(null),
    status: signal('running'),
    warnings: signal([]),
    error: signal(null),
    shown: signal(null),
    speaker: signal(null),
    base,
    lastSeq: null,
    abort: null,
  };
}

/** Text deltas are gathered and applied once per frame: a token never lays out the list. */
/** @type {Map<ReplyState, {text: string, reasoning: string}>} */
const pendingDeltas = new Map();
let frame = 0;
function flushDeltas() {
  frame = 0;
  batch(() => {
    for (const [r, d] of pendingDeltas) {
      if (d.text) r.text.value += d.text;
      if (d.reasoning) r.reasoning.value += d.reasoning;
      if (d.text) queueDisplay(r);
    }
  });
  pendingDeltas.clear();
}

/**
 * When the chat has display regex rules, the streamed text is shown through them: the server
 * renders the text so far at most every 250 ms (one request in flight); the page shows that
 * copy followed by the raw text that arrived since.
 * @param {ReplyState} r
 */
function queueDisplay(r) {
  if (chatView.id.value !== r.chatId || !chatView.displayRules.value || displayBusy.has(r)) return;
  displayBusy.add(r);
  const source = (r.kind === 'continue' ? r.base : '') + r.text.value;
  displayOf({ role: 'assistant', content: source })
    .then((copy) => {
      if (r.shown.value === null || source.length >= r.shown.value.source.length) r.shown.value = { source, copy: copy.content };
    })
    .catch(() => {})
    .finally(() => setTimeout(() => {
      displayBusy.delete(r);
      if (((r.kind === 'continue' ? r.base : '') + r.text.value) !== source) queueDisplay(r);
    }, 250));
}
/** @type {Set<ReplyState>} */
const displayBusy = new Set();
/** @param {ReplyState} r @param {'text'|'reasoning'} field @param {string} s */
function queueDelta(r, field, s) {
  let d = pendingDeltas.get(r);
  if (!d) pendingDeltas.set(r, (d = { text: '', reasoning: '' }));
  d[field] += s;
  if (!frame) frame = requestAnimationFrame(flushDeltas);
}

/** @param {ReplyState} r */
function follow(r) {
  if (r.abort) return;
  r.abort = new AbortController();
  followSse(`/api/replies/${encodeURIComponent(r.replyId)}/events`, {
    lastEventId: r.lastSeq,
    signal: r.abort.signal,
    onEvent(ev) {
      if (ev.id) r.lastSeq = ev.id;
      const d = ev.data || {};
      switch (ev.event) {
        case 'started':
          r.messageId.value = d.messageId ?? null;
          if (d.characterId != null && !r.speaker.value) r.speaker.value = { characterId: d.characterId };
          if (chatView.id.value === r.chatId) refreshTail().catch(() => {});
          break;
        case 'text_delta':
          if (r.kind === 'impersonate') {
            if (chatView.id.value === r.chatId) setDraft(chatView.draft.value + d.text);
          } else queueDelta(r, 'text', d.text);
          break;
        case 'reasoning_delta':
          queueDelta(r, 'reasoning', d.text);
          break;
        case 'speaker':
          // A group reply: the next member answers in its own message. What came before is the
          // previous member's (stored; the re-read tail shows it), what follows is this one's.
          if (r.messageId.value != null && d.messageId != null && r.messageId.value !== d.messageId) {
            flushDeltas();
            batch(() => {
              r.text.value = '';
              r.reasoning.value = '';
              r.tools.value = [];
              r.shown.value = null;
            });
          }
          batch(() => {
            r.messageId.value = d.messageId ?? r.messageId.value;
            r.speaker.value = { characterId: d.characterId, name: d.name, turn: d.turn, turns: d.turns };
          });
          if (chatView.id.value === r.chatId) refreshTail().catch(() => {});
          break;
        case 'tool_call': {
          const list = r.tools.value.filter((t) => t.callId !== d.callId);
          const at = r.tools.value.findIndex((t) => t.callId === d.callId);
          const card = { callId: d.callId, tool: d.tool, status: d.status, label: d.label, errorCode: d.errorCode, truncated: d.truncated };
          if (at >= 0) list.splice(at, 0, card);
          else list.push(card);
          r.tools.value = list;
          break;
        }
        case 'waiting':
          r.status.value = 'waiting';
          r.pending.value = d;
          break;
        case 'resumed':
          r.status.value = 'running';
          if (r.pending.value && r.pending.value.pendingId === d.pendingId) r.pending.value = null;
          break;
        case 'warning':
          r.warnings.value = [...r.warnings.value, d.message];
          break;
        case 'error':
          r.error.value = d.message;
          break;
        case 'reload':
          // Too far behind: the stored message holds the partial text; go on from the newest event.
          r.lastSeq = String(d.lastEventId ?? r.lastSeq ?? '');
          r.text.value = '';
          refreshTail().catch(() => {});
          r.abort = null;
          setTimeout(() => follow(r), 0);
          return true;
        case 'finished':
          flushDeltas();
          if (r.kind === 'impersonate' && d.text && chatView.id.value === r.chatId) setDraft(d.text);
          r.status.value = d.status || 'finished';
          r.pending.value = null;
          if (d.status === 'failed' && !r.error.value) r.error.value = 'the reply failed';
          finish(r);
          return true;
      }
      return false;
    },
  }).catch((e) => {
    r.error.value = errorText(e);
    finish(r);
  });
}

/** @param {ReplyState} r */
async function finish(r) {
  r.abort = null;
  if (chatView.id.value === r.chatId) {
    try {
      await refreshTail();
    } catch {
      /* shown by the next action */
    }
  }
  if (replies.get(r.chatId) === r) replies.delete(r.chatId);
  // Keep the ended reply on screen only for its error.
  if (currentReply.value === r) currentReply.value = r.error.value ? r : null;
  const next = { ...liveReplies.value };
  delete next[r.chatId];
  liveReplies.value = next;
}

/** Attaches the open chat to its live reply, if it has one (after a switch or a reload; a bubble's /trigger). @param {number} chatId */
export async function resumeReply(chatId) {
  const known = replies.get(chatId);
  if (known) {
    currentReply.value = known;
    follow(known);
    return;
  }
  currentReply.value = null;
  try {
    const live = await get(`/api/chats/${chatId}/reply`);
    if (chatView.id.value !== chatId || replies.has(chatId)) return;
    const r = newReply(chatId, live.replyId, 'normal');
    replies.set(chatId, r);
    currentReply.value = r;
    follow(r);
  } catch {
    /* no live reply */
  }
}

/**
 * Sends the composer's text (a normal reply), or starts another kind of reply. In a group chat
 * a normal reply is answered by the member chosen in "Reply as" (then the choice resets), or by
 * `opts.speaker` — a member asked to speak without a new message (`text` undefined).
 * @param {'normal'|'regenerate'|'swipe'|'continue'|'impersonate'} kind
 * @param {string} [text]
 * @param {{speaker?: number}} [opts]
 */
export async function startReply(kind, text, opts = {}) {
  const chatId = chatView.id.value;
  if (chatId == null) return;
  let answer;
  let base = '';
  if (kind === 'normal' && opts.speaker != null && text === undefined) {
    answer = await post(`/api/chats/${chatId}/replies`, { type: 'normal', speaker: opts.speaker });
  } else if (kind === 'normal') {
    const speaker = opts.speaker ?? chatView.speaker.value;
    // `/imagine <prompt>` generates an image message instead of a reply (201, no replyId).
    const image = chatView.attachment.value?.path;
    if (!image && /^\s*\/imagine(\s|$)/.test(text || '')) toast('Generating the image…');
    /** @type {{content: string, speaker?: number, image?: string}} */
    const body = { content: text || '' };
    if (speaker != null) body.speaker = speaker;
    if (image) body.image = image;
    answer = await post(`/api/chats/${chatId}/messages`, body);
    setDraft('');
    if (image) setAttachment(null);
    chatView.speaker.value = null;
    if (!answer.replyId) {
      await refreshTail();
      return;
    }
  } else {
    if (kind === 'continue') {
      const last = [...chatView.messages.value].reverse().find((m) => m.role === 'assistant');
      base = last ? last.content : '';
    }
    if (kind === 'impersonate') setDraft('');
    answer = await post(`/api/chats/${chatId}/replies`, { type: kind });
  }
  followReply(chatId, answer.replyId, kind, base);
  if (kind === 'normal') refreshTail().catch(() => {});
}

/**
 * Shows and follows reply `replyId` of chat `chatId`, started by this page (the composer, a
 * bubble's `/trigger`). Followed by id, not looked up as the chat's live reply: a short reply can
 * end before the page would look, and its events (then its stored message) must still arrive.
 * @param {number} chatId @param {string} replyId
 * @param {'normal'|'regenerate'|'swipe'|'continue'|'impersonate'} [kind] @param {string} [base]
 */
export function followReply(chatId, replyId, kind = 'normal', base = '') {
  // Already followed (the global event stream can announce it first): one follower only.
  const known = replies.get(chatId);
  if (known && known.replyId === replyId) {
    // Picked up as a plain reply before this page knew its kind: it is what this page started.
    known.kind = kind;
    known.base = base;
    if (chatView.id.value === chatId) currentReply.value = known;
    return;
  }
  const r = newReply(chatId, replyId, kind, base);
  replies.set(chatId, r);
  if (chatView.id.value === chatId) currentReply.value = r;
  liveReplies.value = { ...liveReplies.value, [chatId]: { replyId: r.replyId, status: 'running' } };
  follow(r);
}

export async function stopReply() {
  const r = currentReply.value;
  if (!r) return;
  await post(`/api/replies/${encodeURIComponent(r.replyId)}/cancel`);
}

/** @param {'allow'|'deny'} decision @param {boolean} remember */
export async function decide(decision, remember) {
  const r = currentReply.value;
  const p = r && r.pending.value;
  if (!r || !p) return;
  await post(`/api/replies/${encodeURIComponent(r.replyId)}/confirm`, { pendingId: p.pendingId, decision, remember });
  r.pending.value = null;
}

/** @param {{kind: 'option', value: string} | {kind: 'custom', text: string} | {kind: 'cancelled'}} answer */
export async function answerQuestion(answer) {
  const r = currentReply.value;
  const p = r && r.pending.value;
  if (!r || !p) return;
  await post(`/api/replies/${encodeURIComponent(r.replyId)}/answer`, { pendingId: p.pendingId, answer });
  r.pending.value = null;
}

/** Stops following every reply's stream when leaving a chat (they keep running on the server). */
export function leaveChat() {
  for (const r of replies.values()) {
    if (r.abort) {
      r.abort.abort();
      r.abort = null;
    }
  }
  currentReply.value = null;
  chatView.id.value = null;
}

// ---- settings -----------------------------------------------------------------------------

/** @type {import('@preact/signals').Signal<{connections: any[], default: string|null, global: any} | null>} */
export const connections = signal(null);

export async function loadConnections() {
  try {
    connections.value = await get('/api/connections');
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** @param {any} conn @param {string|null} original */
export async function saveConnection(conn, original) {
  connections.value = original
    ? await put(`/api/connections/${encodeURIComponent(original)}`, conn)
    : await post('/api/connections', conn);
}

/** @param {string} name */
export async function removeConnection(name) {
  connections.value = await del(`/api/connections/${encodeURIComponent(name)}`);
}

/** @param {string} name */
export async function makeDefaultConnection(name) {
  connections.value = await post(`/api/connections/${encodeURIComponent(name)}/default`);
}

// ---- advanced rendering and bubble scripts -------------------------------------------------

/**
 * The global switch `rendering.javascript` (`off` | `ask` | `auto`), as the server stores it,
 * and the cards whose scripts the user let run under `ask` (for this page's life).
 */
export const rendering = {
  javascript: signal(/** @type {'off'|'ask'|'auto'} */ ('off')),
  allowedCards: signal(/** @type {Set<string>} */ (new Set())),
};

export async function loadRendering() {
  try {
    const rows = await get('/api/settings');
    const row = rows.find((/** @type {any} */ r) => r.key === 'rendering.javascript');
    if (row) rendering.javascript.value = row.value;
    const theme = rows.find((/** @type {any} */ r) => r.key === 'theme.current');
    if (theme) followCurrentTheme(theme.value);
  } catch {
    /* the settings screen shows errors */
  }
}

/** @param {string} card */
export function allowCardScripts(card) {
  rendering.allowedCards.value = new Set([...rendering.allowedCards.value, card]);
}

/**
 * What bubble scripts asked the user (a confirmation, a picker, an image viewer), shown one
 * at a time by BubbleDialogs.
 * @typedef {{kind: 'confirm', title: string, text: string, remember?: string}
 *   | {kind: 'select', title: string, options: {value: string, label: string, description?: string, subtitle?: string}[], defaultValue?: string}
 *   | {kind: 'preview', src: string} | {kind: 'notice', title: string, text: string}} BubbleAsk
 * @typedef {BubbleAsk & {id: number, resolve: (v: any) => void}} BubbleRequest
 */
export const bubbleRequests = signal(/** @type {BubbleRequest[]} */ ([]));
let bubbleAskId = 0;
const MAX_BUBBLE_REQUESTS = 8;

/** @param {BubbleAsk} ask @returns {Promise<any>} the answer (false / null when refused or too many wait) */
export function askBubble(ask) {
  return new Promise((resolve) => {
    if (bubbleRequests.value.length >= MAX_BUBBLE_REQUESTS) return resolve(ask.kind === 'confirm' ? false : null);
    const req = /** @type {BubbleRequest} */ ({ ...ask, id: ++bubbleAskId, resolve });
    bubbleRequests.value = [...bubbleRequests.value, req];
    if (ask.kind === 'preview') resolve(undefined);
  });
}

/** @param {number} id @param {any} answer */
export function answerBubble(id, answer) {
  const req = bubbleRequests.value.find((r) => r.id === id);
  bubbleRequests.value = bubbleRequests.value.filter((r) => r.id !== id);
  if (req) req.resolve(answer);
}
