// The TavoJS runtime inside a bubble's sandboxed frame (seed 002). The server inlines this file
// into /app/bubble/frame.html, whose policy (sandbox allow-scripts, connect-src 'none') leaves
// the frame an opaque origin with no request of its own. The app posts one `tavo-init`
// message with a MessagePort; from then on every `tavo.*` call is a message on that port, and
// the app runs it through the same operation layer as every other door. Nothing here is
// trusted by the app: a card's script runs in this realm and may replace any of it.
(function () {
  'use strict';
  /** @type {MessagePort|null} */
  let port = null;
  let seq = 0;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: any) => void}>} */
  const pending = new Map();
  /** @type {{chat: Record<string, any>, global: Record<string, any>, message: Record<string, any>}} */
  let vars = { chat: {}, global: {}, message: {} };
  /** @type {{chatId: number, messageId: number, base: string}} */
  let ctx = { chatId: 0, messageId: 0, base: '' };

  /** @param {string} method @param {any[]} args @returns {Promise<any>} */
  function call(method, args) {
    return new Promise((resolve, reject) => {
      if (!port) return reject(new Error('tavo is not ready'));
      const id = ++seq;
      pending.set(id, { resolve, reject });
      let payload;
      try {
        // Only plain data crosses: functions, DOM nodes and cycles fail here, not in the app.
        payload = JSON.parse(JSON.stringify(args === undefined ? [] : args));
      } catch (e) {
        pending.delete(id);
        return reject(new Error(`${method}: arguments must be plain JSON data`));
      }
      port.postMessage({ type: 'call', id, method, args: payload });
    });
  }

  /** The seed's date fields, which JSON carries as ISO strings. */
  const DATE_KEYS = new Set(['creationDate', 'modificationDate']);
  /** A result with its `creationDate` / `modificationDate` strings as `Date` objects (seed
   * 002: "创建时间（Date 对象）"), at any depth (`character.all()` is a list). @param {any} v @returns {any} */
  function withDates(v) {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = withDates(v[i]);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        const x = v[k];
        if (DATE_KEYS.has(k) && typeof x === 'string') {
          const t = new Date(x);
          if (!Number.isNaN(t.getTime())) v[k] = t;
        } else if (x !== null && typeof x === 'object') v[k] = withDates(x);
      }
    }
    return v;
  }

  /** @param {any} d */
  function onPortMessage(d) {
    if (!d || typeof d !== 'object') return;
    if (d.type === 'result') {
      const p = pending.get(d.id);
      if (!p) return;
      pending.delete(d.id);
      if (d.ok) p.resolve(withDates(d.value));
      else {
        const err = new Error(String(d.error || 'failed'));
        // The operation's stable code (`permission_denied`, …) for scripts that branch on it.
        if (typeof d.code === 'string') /** @type {any} */ (err).code = d.code;
        p.reject(err);
      }
    } else if (d.type === 'vars' && d.vars) {
      vars = { chat: d.vars.chat || {}, global: d.vars.global || {}, message: d.vars.message || {} };
    } else if (d.type === 'files' && d.files && typeof d.files === 'object') {
      addFiles(d.files);
    } else if (d.type === 'event' && typeof d.name === 'string') {
      emit(d.name, Array.isArray(d.args) ? d.args : []);
    } else if (d.type === 'plugin-invoke' || d.type === 'plugin-dispatch') {
      invoke(d);
    } else if (d.type === 'plugin-tool-call') {
      runTool(d);
    } else if (d.type === 'plugin-tools-refresh') {
      publishTools(Number.isInteger(d.refresh) ? d.refresh : undefined);
    } else if (d.type === 'plugin-tool-calling') {
      toolCalling = !!d.value;
    } else if (d.type === 'plugin-config' && d.config && typeof d.config === 'object') {
      pluginConfig = d.config;
    } else if (d.type === 'plugin-i18n' && d.i18n && typeof d.i18n === 'object' && i18nState) {
      i18nState = d.i18n;
      for (const h of [...i18nListeners]) {
        try {
          h();
        } catch (e) {
          console.error(e);
        }
      }
    }
  }

  // ---- plugins (Tavo §6.7): tavo.plugin, hooks and actions run on the app's request ---------

  /** Registered handlers by id, in registration order: {key, fn}. @type {Map<number, {key: string, fn: Function}>} */
  const handlers = new Map();
  let handlerSeq = 0;
  /** @type {Record<string, any>} */
  let pluginConfig = {};
  /** @type {{requestedLocale: string, locale: string, defaultLocale: string, supportedLocales: string[], catalog: Record<string, string>} | null} */
  let i18nState = null;
  /** @type {Set<Function>} */
  const i18nListeners = new Set();

  /** @param {any} msg */
  function toApp(msg) {
    if (port) port.postMessage({ type: 'plugin', ...msg });
  }

  /** @param {string} key @param {Function} fn */
  function register(key, fn) {
    if (typeof key !== 'string' || !key) throw new Error('tavo.plugin.on needs an event type (a non-empty string)');
    if (typeof fn !== 'function') throw new Error(`tavo.plugin.on(${JSON.stringify(key)}) needs a handler function`);
    const hid = ++handlerSeq;
    handlers.set(hid, { key, fn });
    toApp({ what: 'on', key, hid });
    return () => {
      if (handlers.delete(hid)) toApp({ what: 'off', key, hid });
    };
  }

  /** The event a handler sees: read-only fields, a writable text, cancel() where allowed. @param {any} payload @param {boolean} cancellable */
  function eventOf(payload, cancellable) {
    /** @type {Record<string, any>} */
    const ev = {};
    const state = { cancelled: false, reason: /** @type {string|null} */ (null) };
    for (const k of Object.keys(payload || {})) {
      if (k === 'text') continue;
      Object.defineProperty(ev, k, { value: payload[k], enumerable: true, writable: false, configurable: false });
    }
    if (payload && 'text' in payload) ev.text = payload.text;
    if (cancellable) {
      Object.defineProperty(ev, 'cancel', {
        value: (/** @type {any} */ reason) => {
          state.cancelled = true;
          state.reason = reason == null ? null : String(reason);
        },
        enumerable: false,
      });
    }
    return { ev, state };
  }

  /** @param {any} d */
  function invoke(d) {
    const id = d.id;
    /** @param {any} r */
    const reply = (r) => toApp({ what: 'result', id, ...r });
    /** @param {any} e */
    const message = (e) => String((e && e.message) || e);
    if (d.type === 'plugin-dispatch') {
      const list = [...handlers.values()].filter((h) => h.key === d.key);
      if (!list.length) return reply({ ok: false, missing: true });
      /** @type {Promise<any>[]} */
      const runs = [];
      try {
        // An action handler gets no arguments; the app waits only for it to start (its
        // rejection is reported afterwards).
        for (const h of list) runs.push(Promise.resolve(h.fn()));
      } catch (e) {
        return reply({ ok: false, error: message(e) });
      }
      reply({ ok: true });
      Promise.all(runs).catch((e) => toApp({ what: 'failed', key: d.key, error: message(e) }));
      return;
    }
    const h = handlers.get(d.hid);
    if (!h) return reply({ ok: false, missing: true });
    const { ev, state } = eventOf(d.event, !!d.cancellable);
    Promise.resolve()
      .then(() => h.fn(ev))
      .then(
        () => reply({ ok: true, text: ev.text, cancelled: state.cancelled, reason: state.reason }),
        (e) => reply({ ok: false, error: message(e) }),
      );
  }

  // ---- SillyTavern function tools (seed 001) for plugin entries --------------------------------
  // `SillyTavern.getContext()` gives the entry registerFunctionTool & co. The frame keeps each
  // tool's functions (action, formatMessage, shouldRegister); the app gets only the data
  // (name, description, parameters, stealth) of the tools whose shouldRegister is true, asks for
  // them again before each generation, and sends each call here.

  /** @type {Map<string, any>} */
  const fnTools = new Map();
  let toolCalling = false;

  /** The registrations the app may offer now (shouldRegister evaluated; a throwing one is
   * false); `refresh` answers the app's request of that number. @param {number} [refresh] */
  function publishTools(refresh) {
    /** @type {any[]} */
    const list = [];
    for (const t of fnTools.values()) {
      let on = true;
      if (typeof t.shouldRegister === 'function') {
        try {
          on = !!t.shouldRegister();
        } catch (e) {
          on = false;
        }
      }
      if (!on) continue;
      try {
        list.push(JSON.parse(JSON.stringify({ name: t.name, displayName: t.displayName, description: t.description, parameters: t.parameters, stealth: !!t.stealth })));
      } catch (e) {
        console.error(`registerFunctionTool(${t.name}): parameters must be plain JSON data`);
      }
    }
    toApp({ what: 'tools', tools: list, refresh });
  }

  const sillyTavernContext = Object.freeze({
    /** @param {any} def */
    registerFunctionTool(def) {
      if (!def || typeof def !== 'object') throw new Error('registerFunctionTool needs {name, description, parameters, action}');
      if (typeof def.name !== 'string' || !def.name) throw new Error('registerFunctionTool: name must be a non-empty string');
      if (typeof def.description !== 'string' || !def.description) throw new Error(`registerFunctionTool(${def.name}): description must be a non-empty string`);
      if (!def.parameters || typeof def.parameters !== 'object') throw new Error(`registerFunctionTool(${def.name}): parameters must be a JSON Schema object`);
      if (typeof def.action !== 'function') throw new Error(`registerFunctionTool(${def.name}): action must be a function`);
      fnTools.set(def.name, { ...def });
      publishTools();
    },
    /** @param {string} name */
    unregisterFunctionTool(name) {
      if (fnTools.delete(String(name))) publishTools();
    },
    isToolCallingSupported: () => toolCalling,
    /** Continue, impersonate and quiet (background) generations never call tools. @param {string} type */
    canPerformToolCalls: (type) => toolCalling && !['continue', 'impersonate', 'quiet'].includes(String(type)),
  });

  /** Runs one call the engine sent: the toast text first, then the result. @param {any} d */
  async function runTool(d) {
    const t = fnTools.get(d.name);
    if (!t) return toApp({ what: 'tool-result', id: d.id, ok: false, error: `${d.name} is not registered in this plugin` });
    let toast = '';
    if (typeof t.formatMessage === 'function') {
      try {
        toast = String(t.formatMessage(d.args) ?? '');
      } catch (e) {
        toast = '';
      }
    }
    toApp({ what: 'tool-started', id: d.id, toast });
    try {
      const r = await t.action(d.args);
      const result = typeof r === 'string' ? r : JSON.stringify(r === undefined ? null : r);
      toApp({ what: 'tool-result', id: d.id, ok: true, result });
    } catch (/** @type {any} */ e) {
      toApp({ what: 'tool-result', id: d.id, ok: false, error: String((e && e.message) || e) });
    }
  }

  /** {name} placeholders with string, finite number and boolean params. @param {string} text @param {any} params */
  function fill(text, params) {
    if (!params || typeof params !== 'object') return text;
    return text.replace(/\{([^{}\s]+)\}/g, (all, name) => {
      if (!Object.prototype.hasOwnProperty.call(params, name)) return all;
      const v = params[name];
      if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return String(v);
      return all;
    });
  }

  /** `tavo.plugin` for this frame. @param {any} p */
  function pluginOf(p) {
    pluginConfig = p.config && typeof p.config === 'object' ? p.config : {};
    i18nState = p.i18n && typeof p.i18n === 'object' ? p.i18n : null;
    const declared = { inputActions: new Set(p.inputActions || []), sidebar: new Set(p.sidebar || []) };
    /** @param {'inputActions'|'sidebar'} kind @param {any} id @param {Function} fn */
    const action = (kind, id, fn) => {
      if (typeof id !== 'string' || !id) throw new Error(`tavo.plugin.on${kind === 'sidebar' ? 'SidebarAction' : 'InputAction'} needs an action id (a non-empty string)`);
      if (!declared[kind].has(id)) console.warn(`${kind}:${id} is not declared in the manifest; ids must match exactly`);
      return register(`${kind}:${id}`, fn);
    };
    const i18n = i18nState
      ? Object.freeze({
          get requestedLocale() { return i18nState ? i18nState.requestedLocale : null; },
          get locale() { return i18nState ? i18nState.locale : null; },
          get defaultLocale() { return i18nState ? i18nState.defaultLocale : null; },
          get supportedLocales() { return i18nState ? [...(i18nState.supportedLocales || [])] : []; },
          /** @param {any} key @param {any} [params] */
          t(key, params) {
            const k = String(key);
            const cat = (i18nState && i18nState.catalog) || {};
            const text = Object.prototype.hasOwnProperty.call(cat, k) && typeof cat[k] === 'string' ? cat[k] : k;
            return fill(text, params);
          },
          /** @param {any} handler */
          onChange(handler) {
            if (typeof handler !== 'function') throw new Error('tavo.plugin.i18n.onChange needs a function');
            i18nListeners.add(handler);
            return () => { i18nListeners.delete(handler); };
          },
        })
      : null;
    return Object.freeze({
      pluginId: String(p.pluginId),
      fragmentId: p.fragmentId == null ? null : String(p.fragmentId),
      /** @param {any} id @param {any} fn */
      onInputAction: (id, fn) => action('inputActions', id, fn),
      /** @param {any} id @param {any} fn */
      onSidebarAction: (id, fn) => action('sidebar', id, fn),
      /** @param {any} type @param {any} fn */
      on: (type, fn) => {
        // Tavo §6.8 / seed 002: generation and input hooks belong to the installed plugin's
        // entry; an HTML fragment registers actions and notifications only.
        if (p.fragmentId != null && typeof type === 'string' && /^(generation|input):/.test(type)) {
          throw new Error(`${type} can be registered only by the plugin's entry script, not by an HTML fragment`);
        }
        return register(type, fn);
      },
      config: Object.freeze({
        /** @param {any} key */
        get(key) {
          const k = String(key);
          return Object.prototype.hasOwnProperty.call(pluginConfig, k) && pluginConfig[k] !== undefined ? clone(pluginConfig[k]) : null;
        },
        all: () => clone(pluginConfig) || {},
      }),
      i18n,
    });
  }

  // ---- variables: synchronous reads of a snapshot, writes sent in order --------------------

  /** @param {any} scope */
  function scopeOf(scope) {
    if (scope == null || scope === 'chat') return { key: 'chat', arg: { scope: 'chat' } };
    if (scope === 'global') return { key: 'global', arg: { scope: 'global' } };
    if (scope === 'message') return { key: 'message', arg: { scope: 'message', message: { id: ctx.messageId } } };
    if (typeof scope === 'object' && scope.scope === 'message') {
      const own = scope.id === ctx.messageId || scope.id == null && scope.index == null;
      const target = scope.id != null ? { id: scope.id } : scope.index != null ? { index: scope.index } : { id: ctx.messageId };
      return { key: own ? 'message' : null, arg: { scope: 'message', message: target } };
    }
    throw new Error(`unknown variable scope ${JSON.stringify(scope)}; use 'chat', 'global', 'message' or {scope: 'message', id | index}`);
  }

  /** @param {any} name */
  function pathOf(name) {
    if (typeof name !== 'string' || !name || name.split('.').some((s) => !s)) {
      throw new Error('a variable name must be a non-empty name or dotted path (status.hp)');
    }
    return name.split('.');
  }

  /** @param {any} v */
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  /** @param {any} v */
  const clone = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

  /** @param {Record<string, any>|null} store @param {string[]} path */
  function read(store, path) {
    /** @type {any} */
    let cur = store;
    for (const seg of path) {
      if (!isObj(cur) || !Object.prototype.hasOwnProperty.call(cur, seg)) return null;
      cur = cur[seg];
    }
    return cur === undefined ? null : clone(cur);
  }

  /** @param {Record<string, any>} store @param {string[]} path @param {(parent: any, leaf: string) => void} edit */
  function write(store, path, edit) {
    /** @type {any} */
    let cur = store;
    for (const seg of path.slice(0, -1)) {
      if (!isObj(cur[seg])) Object.defineProperty(cur, seg, { value: {}, writable: true, enumerable: true, configurable: true });
      cur = cur[seg];
    }
    edit(cur, path[path.length - 1]);
  }

  /** @param {Record<string, any>} parent @param {string} key @param {any} value */
  const put = (parent, key, value) => Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });

  /** @param {string} op @param {any} arg */
  function send(op, arg) {
    call(op, [arg]).catch((e) => console.error(`tavo.${op.split('.')[1]}: ${e.message}`));
  }

  const variables = {
    /** @param {string} name @param {any} [scope] */
    get(name, scope) {
      const path = pathOf(name);
      const s = scopeOf(scope);
      return s.key ? read(vars[/** @type {'chat'|'global'|'message'} */ (s.key)], path) : null;
    },
    /** @param {string} name @param {any} value @param {any} [scope] */
    set(name, value, scope) {
      const path = pathOf(name);
      const s = scopeOf(scope);
      const v = clone(value);
      if (s.key) write(vars[/** @type {'chat'|'global'|'message'} */ (s.key)], path, (p, k) => put(p, k, v));
      send('variable.set', { name, value: v, ...s.arg });
    },
    /** @param {string} name @param {any} patch @param {any} [scope] */
    update(name, patch, scope) {
      const path = pathOf(name);
      const s = scopeOf(scope);
      if (typeof patch === 'function') patch = patch(variables.get(name, scope));
      if (!isObj(patch)) throw new Error('tavo.update merges an object into an object variable');
      const v = clone(patch);
      if (s.key) {
        write(vars[/** @type {'chat'|'global'|'message'} */ (s.key)], path, (p, k) => {
          const base = isObj(p[k]) ? p[k] : {};
          for (const key of Object.keys(v)) put(base, key, v[key]);
          put(p, k, base);
        });
      }
      send('variable.update', { name, value: v, ...s.arg });
    },
    /** @param {string} name @param {any} [scope] */
    unset(name, scope) {
      const path = pathOf(name);
      const s = scopeOf(scope);
      if (s.key) write(vars[/** @type {'chat'|'global'|'message'} */ (s.key)], path, (p, k) => { delete p[k]; });
      send('variable.unset', { name, ...s.arg });
    },
  };

  /** @param {string} ns @param {string[]} names */
  function namespace(ns, names) {
    /** @type {Record<string, (...a: any[]) => Promise<any>>} */
    const o = {};
    for (const n of names) o[n] = (...args) => call(`${ns}.${n}`, args);
    return Object.freeze(o);
  }

  const ASSET = ['all', 'get', 'find', 'create', 'update', 'delete'];

  // ---- files: signed URLs, so <img>/<audio> work on a server with an access token ----------
  // The app hands the frame short-lived URLs signed by the server for the stored files (and
  // for each file the frame saves, before the save resolves). `tavo.file.url` answers the
  // signed URL of a known file, else the seed's relative path; `src` attributes that hold a
  // relative `files/…` path are pointed at the signed URL too.

  /** @type {{chat: Record<string, string>, global: Record<string, string>}} */
  const files = { chat: Object.create(null), global: Object.create(null) };
  /** @param {any} more */
  function addFiles(more) {
    for (const s of /** @type {const} */ (['chat', 'global'])) {
      const m = more && more[s];
      if (!m || typeof m !== 'object') continue;
      for (const k of Object.keys(m)) if (typeof m[k] === 'string') files[s][k] = m[k];
    }
    if (document.documentElement) relink(document.documentElement);
  }
  const VIRTUAL = /^files\/(chat|global)\/([^/\\:]+)$/;
  /** Files asked for once (a name the app has no URL for is asked about once per frame). */
  const asked = new Set();
  /** Points `src` attributes holding a `files/…` path at their signed URL; a path the frame
   * has no URL for yet (a file saved by another bubble, the model, or after this frame
   * started) is asked of the app, which answers with a `files` message. @param {Element} root */
  function relink(root) {
    const els = root.matches && root.matches('[src]') ? [root] : [];
    for (const el of root.querySelectorAll ? root.querySelectorAll('[src]') : []) els.push(el);
    /** @type {{scope: string, name: string}[]} */
    const unknown = [];
    for (const el of els) {
      const m = VIRTUAL.exec(el.getAttribute('src') || '');
      if (!m) continue;
      const url = files[/** @type {'chat'|'global'} */ (m[1])][m[2]];
      if (url) el.setAttribute('src', url);
      else if (!asked.has(m[0]) && asked.size < 500) {
        asked.add(m[0]);
        unknown.push({ scope: m[1], name: m[2] });
      }
    }
    if (unknown.length && port) port.postMessage({ type: 'sign', files: unknown });
  }
  /** The file's path, `files/chat/NAME` or `files/global/NAME` (seed 002: synchronous, never
   * checked, always a string). It is the stable name: it keeps working stored in a message, a
   * variable or a background, and `image.generate` takes it as a reference image; an `<img>`
   * given it here shows the file through a signed URL the frame swaps in.
   * @param {string} name @param {any} [scope] */
  function fileUrl(name, scope) {
    const s = scope === 'global' || (scope && scope.scope === 'global') ? 'global' : 'chat';
    return `files/${s}/${name}`;
  }

  const input = namespace('input', ['get', 'set', 'append', 'clear', 'send']);
  const utils = namespace('utils', ['toast', 'openUrl', 'export', 'preview', 'select']);

  const tavo = {
    get: variables.get,
    set: variables.set,
    update: variables.update,
    unset: variables.unset,
    message: namespace('message', ['find', 'get', 'current', 'count', 'append', 'update', 'delete']),
    chat: namespace('chat', ['current', 'update']),
    character: namespace('character', [...ASSET, 'import']),
    persona: namespace('persona', ASSET),
    preset: namespace('preset', [...ASSET, 'import']),
    lorebook: namespace('lorebook', [...ASSET, 'import']),
    regex: namespace('regex', [...ASSET, 'import']),
    memory: namespace('memory', ['current', 'update', 'append', 'extract']),
    /** @param {string} prompt @param {any} [options] */
    generate: (prompt, options) => call('generate', [prompt, options]),
    image: namespace('image', ['generate']),
    tts: namespace('tts', ['play', 'stop']),
    file: Object.freeze({ ...namespace('file', ['save', 'load', 'delete', 'exists']), url: fileUrl }),
    input,
    utils: Object.freeze({
      ...utils,
      /** @param {any} src */
      preview(src) {
        if (typeof src !== 'string' || !src) throw new Error('tavo.utils.preview needs a non-empty src');
        return utils.preview(src);
      },
    }),
    app: namespace('app', ['version', 'versionNumber']),
    events: /** @type {any} */ (null),
    v1: /** @type {any} */ (null),
  };
  tavo.v1 = tavo;

  // ---- TavernHelper (JS-Slash-Runner) shim: its most used globals as thin maps onto tavo.* ----
  // What maps cleanly is here; README.md lists the rest. Reads of variables stay synchronous
  // (the frame's snapshot); message functions are async (SillyTavern's chat array is not in
  // this frame), so `await getChatMessages(...)`.

  /** Listeners by event name (eventOn). @type {Map<string, Set<Function>>} */
  const listeners = new Map();
  /** @param {string} name @param {any[]} args */
  function emit(name, args) {
    for (const fn of [...(listeners.get(name) || [])]) {
      Promise.resolve()
        .then(() => fn(...args))
        .catch((e) => console.error(`eventOn(${name}): ${(e && e.message) || e}`));
    }
  }
  /** @param {any} name @param {any} fn */
  function eventOn(name, fn) {
    if (typeof name !== 'string' || typeof fn !== 'function') throw new Error('eventOn(event, listener) needs an event name and a function');
    if (!listeners.has(name)) listeners.set(name, new Set());
    /** @type {Set<Function>} */ (listeners.get(name)).add(fn);
    return { stop: () => eventRemoveListener(name, fn) };
  }
  /** @param {any} name @param {any} fn */
  function eventOnce(name, fn) {
    if (typeof fn !== 'function') throw new Error('eventOnce(event, listener) needs a function');
    const once = (/** @type {any[]} */ ...a) => {
      eventRemoveListener(name, once);
      return fn(...a);
    };
    return eventOn(name, once);
  }
  /** @param {any} name @param {any} fn */
  function eventRemoveListener(name, fn) {
    const set = listeners.get(name);
    if (set) set.delete(fn);
  }
  /** Lifecycle hooks that only an installed plugin's entry registers (seed 002, Tavo §6.8). */
  const PLUGIN_HOOKS = /^(generation|input):/;
  /** @param {any} type @param {any} fn @param {string} what */
  function checkEvent(type, fn, what) {
    if (typeof type !== 'string' || !type) throw new Error(`tavo.events.${what} needs an event type (a non-empty string)`);
    if (PLUGIN_HOOKS.test(type)) throw new Error(`${type} is a plugin hook, not a tavo.events event: register it with tavo.plugin.on in an installed plugin's entry`);
    if (typeof fn !== 'function') throw new Error(`tavo.events.${what}(${JSON.stringify(type)}) needs a handler function`);
  }
  /**
   * `tavo.events`: the chat's notifications for a message's scripts — `chat:updated`,
   * `message:added`, `message:updated`, `message:deleted` and `message:changed` (after each of
   * the three), with the event object of Tavo §6.8 (`type`, `chatId`, `at`, and `chat` or
   * `change` + `message`). They cannot change or block anything; generation and input hooks
   * stay with plugin entries, as the seed says. `on` answers the function that unsubscribes.
   */
  const tavoEvents = Object.freeze({
    TYPES: Object.freeze(['chat:updated', 'message:added', 'message:updated', 'message:deleted', 'message:changed']),
    /** @param {any} type @param {any} fn */
    on(type, fn) {
      checkEvent(type, fn, 'on');
      eventOn(type, fn);
      return () => eventRemoveListener(type, fn);
    },
    /** @param {any} type @param {any} fn */
    once(type, fn) {
      checkEvent(type, fn, 'once');
      const { stop } = eventOnce(type, fn);
      return stop;
    },
    /** @param {any} type @param {any} fn */
    off(type, fn) {
      eventRemoveListener(type, fn);
    },
  });
  tavo.events = tavoEvents;

  const tavernEvents = Object.freeze({
    MESSAGE_SENT: 'message_sent',
    MESSAGE_RECEIVED: 'message_received',
    MESSAGE_UPDATED: 'message_updated',
    MESSAGE_EDITED: 'message_edited',
    MESSAGE_DELETED: 'message_deleted',
    USER_MESSAGE_RENDERED: 'user_message_rendered',
    CHARACTER_MESSAGE_RENDERED: 'character_message_rendered',
  });

  /** JS-Slash-Runner's `{type}`: 'chat' (default), 'global', or 'message' (this bubble's). @param {any} option */
  function helperScope(option) {
    const type = (option && option.type) || 'chat';
    if (type === 'chat' || type === 'global') return type;
    if (type === 'message') {
      const mid = option.message_id;
      if (mid == null || mid === 'latest' || mid === ctx.messageId) return 'message';
      throw new Error('getVariables({type: "message"}) reads this bubble\'s own message only in Tavo');
    }
    throw new Error(`variables of type ${JSON.stringify(type)} do not exist in Tavo (chat, global, message)`);
  }
  /** @param {any} v */
  const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  /** lodash's merge for JSON data: objects merge key by key, everything else is replaced. @param {any} a @param {any} b */
  function merge(a, b) {
    if (!isPlain(a) || !isPlain(b)) return clone(b);
    /** @type {Record<string, any>} */
    const out = {};
    for (const k of Object.keys(a)) put(out, k, a[k]);
    for (const k of Object.keys(b)) put(out, k, k in out ? merge(out[k], b[k]) : clone(b[k]));
    return out;
  }
  /** @param {any} option */
  function getVariables(option) {
    const s = helperScope(option);
    return clone(vars[s]) || {};
  }
  /** @param {any} table @param {any} option */
  function replaceVariables(table, option) {
    if (!isPlain(table)) throw new Error('replaceVariables(variables) needs an object');
    const s = helperScope(option);
    for (const k of Object.keys(vars[s])) if (!Object.prototype.hasOwnProperty.call(table, k)) variables.unset(k, s);
    for (const k of Object.keys(table)) if (k && !k.includes('.')) variables.set(k, table[k], s);
  }
  /** @param {any} table @param {any} option */
  async function insertOrAssignVariables(table, option) {
    if (!isPlain(table)) throw new Error('insertOrAssignVariables(variables) needs an object');
    replaceVariables(merge(getVariables(option), table), option);
  }
  /** @param {any} updater @param {any} option */
  async function updateVariablesWith(updater, option) {
    if (typeof updater !== 'function') throw new Error('updateVariablesWith(updater) needs a function');
    const next = await updater(getVariables(option));
    replaceVariables(next, option);
    return getVariables(option);
  }
  /** @param {any} path @param {any} option */
  async function deleteVariable(path, option) {
    const s = helperScope(option);
    const had = variables.get(path, s) !== null;
    variables.unset(path, s);
    return { variables: getVariables(option), delete_occurred: had };
  }

  /** `5`, `-1`, `'2-4'` → [start, end] floors (negatives count from the end). @param {any} range */
  function helperRange(range) {
    const t = String(range ?? '').trim();
    let m = /^(-?\d+)$/.exec(t);
    if (m) return [Number(m[1]), Number(m[1])];
    m = /^(-?\d+)-(-?\d+)$/.exec(t);
    if (m) return [Number(m[1]), Number(m[2])];
    throw new Error(`the message range ${JSON.stringify(range)} is not valid (use 3, -1 or '2-5')`);
  }
  /** @param {any} m */
  const helperMessage = (m) => ({ message_id: m.floor, name: m.name, role: m.role, is_hidden: !!m.hidden, message: m.content, data: {}, extra: {}, swipe_id: 0, swipes: [m.content], swipes_data: [{}] });
  /** @param {any} range @param {any} [option] */
  async function getChatMessages(range, option) {
    const o = option || {};
    let [a, b] = helperRange(range);
    if (a < 0 || b < 0) {
      const n = await tavo.message.count();
      if (a < 0) a += n;
      if (b < 0) b += n;
    }
    if (a > b) [a, b] = [b, a];
    /** @type {Record<string, any>} */
    const filter = {};
    if (o.role && o.role !== 'all') filter.role = o.role;
    if (o.hide_state === 'hidden') filter.hidden = true;
    if (o.hide_state === 'unhidden') filter.hidden = false;
    const list = await call('compat.messages', [[Math.max(0, a), Math.max(0, b)], filter]);
    return list.map(helperMessage);
  }
  /** @param {any} floor */
  async function byFloor(floor) {
    let f = Number(floor);
    if (!Number.isInteger(f)) throw new Error('message_id must be a floor (an integer)');
    if (f < 0) f += await tavo.message.count();
    const [m] = await call('compat.messages', [f]);
    if (!m) throw new Error(`there is no message at floor ${floor}`);
    return m;
  }
  /** @param {any} list */
  async function setChatMessages(list) {
    if (!Array.isArray(list)) throw new Error('setChatMessages needs an array of {message_id, message?, is_hidden?}');
    for (const change of list) {
      const m = await byFloor(change && change.message_id);
      const edit = { id: m.id, content: change.message !== undefined ? String(change.message) : m.content, hidden: change.is_hidden !== undefined ? !!change.is_hidden : !!m.hidden };
      if ((await tavo.message.update(edit, { reuseContext: m.id === ctx.messageId })) == null) throw new Error(`message ${change.message_id} could not be updated`);
    }
  }
  /** @param {any} list */
  async function createChatMessages(list) {
    if (!Array.isArray(list)) throw new Error('createChatMessages needs an array of {role, message, is_hidden?, name?}');
    const chat = await tavo.chat.current();
    for (const m of list) {
      const role = m && m.role === 'user' ? 'user' : 'assistant';
      const who = m && m.name != null && role === 'assistant' ? (chat?.characters || []).find((/** @type {any} */ c) => c.name === m.name) : null;
      if (m && m.role === 'system') throw new Error('createChatMessages: system messages are written with triggerSlash("/sys …") in Tavo');
      const id = await tavo.message.append({ role, content: String((m && m.message) ?? ''), hidden: !!(m && m.is_hidden), characterId: who ? who.id : undefined });
      if (id == null) throw new Error('createChatMessages: the message could not be added');
    }
  }
  /** @param {any} floors */
  async function deleteChatMessages(floors) {
    if (!Array.isArray(floors)) throw new Error('deleteChatMessages needs an array of floors');
    const ids = [];
    for (const f of floors) ids.push((await byFloor(f)).id);
    for (const id of ids) await tavo.message.delete(id);
  }
  async function getLastMessageId() {
    return (await tavo.message.count()) - 1;
  }
  /** Floor of this bubble's message. */
  async function getCurrentMessageId() {
    const me = await tavo.message.current();
    if (!me) return null;
    const n = await tavo.message.count();
    const list = await call('compat.messages', [[0, n - 1]]);
    const own = list.find((/** @type {any} */ m) => m.id === me.id);
    return own ? own.floor : null;
  }
  /** JS-Slash-Runner's generate / generateRaw: `{user_input}` (or the text) → tavo.generate. @param {boolean} context */
  const helperGenerate = (context) => async (/** @type {any} */ config) => {
    const input = config && typeof config === 'object' ? config.user_input : config;
    return tavo.generate(String(input ?? ''), { context });
  };
  /** @param {string} cmd */
  const slash = (cmd) => call('triggerSlash', [cmd]);

  const tavernHelper = Object.freeze({
    getVariables,
    replaceVariables,
    insertOrAssignVariables,
    updateVariablesWith,
    deleteVariable,
    getChatMessages,
    setChatMessages,
    createChatMessages,
    deleteChatMessages,
    getLastMessageId,
    getCurrentMessageId,
    eventOn,
    eventOnce,
    eventRemoveListener,
    tavern_events: tavernEvents,
    triggerSlash: slash,
    generate: helperGenerate(true),
    generateRaw: helperGenerate(false),
  });

  // ---- the browser's own dialogs and the console ------------------------------------------
  // `prompt()`, `confirm()` and `alert()` are the browser's dialogs (the frame is sandboxed
  // with `allow-modals`): the seed's demos call `prompt()` and use its answer on the next
  // line, which only a dialog that blocks the script can give. A frame may show DIALOGS of
  // them per minute; past that they answer as if cancelled (undefined, false, null) and say so
  // in the console, so a script cannot keep the page behind dialogs. `print()` does nothing.

  const DIALOGS = 5;
  /** @type {number[]} */
  let dialogTimes = [];
  function dialogTurn() {
    const now = Date.now();
    dialogTimes = dialogTimes.filter((t) => now - t < 60000);
    if (dialogTimes.length >= DIALOGS) {
      console.warn(`this message showed ${DIALOGS} dialogs in the last minute; further ones answer as cancelled`);
      return false;
    }
    dialogTimes.push(now);
    return true;
  }
  function guardDialogs() {
    const w = /** @type {any} */ (window);
    const native = { alert: w.alert, confirm: w.confirm, prompt: w.prompt };
    /** @param {string} name @param {Function} f */
    const def = (name, f) => Object.defineProperty(window, name, { value: f, writable: false, configurable: false, enumerable: true });
    def('alert', (/** @type {any} */ m) => { if (dialogTurn()) native.alert.call(window, m); });
    def('confirm', (/** @type {any} */ m) => (dialogTurn() ? !!native.confirm.call(window, m) : false));
    def('prompt', (/** @type {any} */ m, /** @type {any} */ v) => (dialogTurn() ? native.prompt.call(window, m, v) : null));
    def('print', () => console.warn('print() is not available in a message'));
  }

  /** Console lines a frame may send the app per second (a bucket of LOG_BURST). */
  const LOG_RATE = 50;
  const LOG_BURST = 200;
  let logTokens = LOG_BURST;
  let logAt = Date.now();
  let logDropped = 0;
  /** One value as the console panel shows it. @param {any} v */
  function logText(v) {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return String(v);
    try {
      return JSON.stringify(v);
    } catch (e) {
      return Object.prototype.toString.call(v);
    }
  }
  /** `console.log/info/warn/error/debug` reach the chat's JavaScript console in the app (the
   * seed's sidebar console), as well as the browser's. */
  function forwardConsole() {
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const c = /** @type {any} */ (console);
      const own = c[level];
      c[level] = (/** @type {any[]} */ ...args) => {
        own.apply(console, args);
        const now = Date.now();
        logTokens = Math.min(LOG_BURST, logTokens + ((now - logAt) / 1000) * LOG_RATE);
        logAt = now;
        if (logTokens < 1) {
          logDropped++;
          return;
        }
        logTokens--;
        let text = args.map(logText).join(' ');
        if (logDropped) {
          text = `(${logDropped} lines dropped: too many at once) ${text}`;
          logDropped = 0;
        }
        if (port) port.postMessage({ type: 'log', level, text: text.slice(0, 2000) });
      };
    }
  }

  function reportSize() {
    if (!port) return;
    // The root's box, not its scrollHeight (which is never less than the frame), so a frame
    // shrinks to its content; the body's scrollHeight adds what overflows it.
    const el = document.documentElement;
    const h = Math.ceil(Math.max(el ? el.getBoundingClientRect().height : 0, document.body ? document.body.scrollHeight : 0));
    port.postMessage({ type: 'size', height: h });
  }

  /** Puts the frame's base and default look first in the document the card wrote. @param {string} html @param {any} look */
  function withHead(html, look) {
    const esc = (/** @type {string} */ s) => String(s || '').replace(/[<>"]/g, '');
    const head = `<base href="${esc(ctx.base)}" target="_blank"><style>:root{color-scheme:${esc(look.scheme) || 'light dark'};color:${esc(look.color)};font:${esc(look.font)}}body{margin:0;background:transparent;overflow-wrap:anywhere}img{max-width:100%}</style>`;
    const m = /<head[^>]*>/i.exec(html) || /<html[^>]*>/i.exec(html);
    if (m) return html.slice(0, m.index + m[0].length) + head + html.slice(m.index + m[0].length);
    if (/^\s*<!doctype/i.test(html)) {
      const end = html.indexOf('>') + 1;
      return html.slice(0, end) + head + html.slice(end);
    }
    return `<!doctype html><html><head>${head}</head><body>${html}</body></html>`;
  }

  window.addEventListener('message', function init(e) {
    // Only the app (our parent) starts a frame, once; a sibling bubble's forged init is ignored.
    if (port || e.source !== window.parent || !e.data || e.data.type !== 'tavo-init' || !e.ports || !e.ports[0]) return;
    const d = e.data;
    port = e.ports[0];
    ctx = { chatId: Number(d.chatId) || 0, messageId: Number(d.messageId) || 0, base: String(d.base || '') };
    if (d.vars) vars = { chat: d.vars.chat || {}, global: d.vars.global || {}, message: d.vars.message || {} };
    if (d.files) addFiles(d.files);
    port.onmessage = (ev) => onPortMessage(ev.data);
    window.removeEventListener('message', init);
    if (d.plugin && typeof d.plugin === 'object') /** @type {any} */ (tavo).plugin = pluginOf(d.plugin);
    if (d.plugin && typeof d.plugin === 'object') toolCalling = !!d.plugin.toolCalling;
    Object.defineProperty(window, 'tavo', { value: Object.freeze(tavo), writable: false, configurable: false, enumerable: true });
    Object.defineProperty(window, 'triggerSlash', { value: slash, writable: true, configurable: true });
    // JS-Slash-Runner's globals, also under TavernHelper (scripts use both forms).
    Object.defineProperty(window, 'TavernHelper', { value: tavernHelper, writable: true, configurable: true });
    for (const [k, v] of Object.entries(tavernHelper)) {
      if (!(k in window)) Object.defineProperty(window, k, { value: v, writable: true, configurable: true });
    }
    guardDialogs();
    forwardConsole();
    document.open();
    document.write(withHead(String(d.html || ''), d.look || {}));
    document.close();
    // The app expects the one load event that closing the written document causes; any other
    // load means the frame navigated away.
    port.postMessage({ type: 'written' });
    // document.open() erased earlier listeners; errors of the card's scripts go to the app's log.
    window.addEventListener('error', (ev) => port && port.postMessage({ type: 'log', level: 'error', text: String(ev.message).slice(0, 2000) }));
    window.addEventListener('unhandledrejection', (ev) => port && port.postMessage({ type: 'log', level: 'error', text: `Uncaught (in promise) ${String((ev.reason && ev.reason.message) || ev.reason)}`.slice(0, 2000) }));
    relink(document.documentElement);
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'attributes' && r.target instanceof Element) relink(r.target);
        for (const n of r.addedNodes) if (n instanceof Element) relink(n);
      }
    }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ['src'] });
    const ro = new ResizeObserver(() => reportSize());
    ro.observe(document.documentElement);
    if (document.body) ro.observe(document.body);
    window.addEventListener('load', reportSize);
    reportSize();
    // A plugin's entry: its code with the unqualified lexical `tavo` as a parameter.
    if (typeof d.entry === 'string') {
      Object.defineProperty(window, 'SillyTavern', { value: Object.freeze({ getContext: () => sillyTavernContext }), writable: false, configurable: false, enumerable: true });
      try {
        new Function('tavo', d.entry + '\n//# sourceURL=plugin-entry.js')(/** @type {any} */ (window).tavo);
      } catch (/** @type {any} */ e) {
        port.postMessage({ type: 'log', level: 'error', text: 'entry: ' + String((e && e.message) || e) });
      }
      toApp({ what: 'ready' });
    }
  });
})();
