// Text-to-speech in the open chat (Tavo §14.1–14.2). The server decides everything — which
// voice, what the playback rules leave, the synthesis and its cache — and publishes `tts`
// events on /api/events; this file only plays them:
//
// - `TtsPlayer` (mounted once per open chat) holds the chat's one shared queue: a `play`
//   event with `queue: false` interrupts what plays and clears the queue, `queue: true`
//   appends; `stop` stops and clears. Events of other chats are ignored. With the voice
//   setting `autoPlay` on, each finished reply of this chat is spoken (its message, with the
//   playback rules, queued). With `backgroundPlayback` off, speech pauses while the page is
//   hidden (another tab, a locked phone) and goes on where it was when the page is shown.
// - `SpeakButton` (on each message) asks the server to speak that message with its speaker's
//   voice and the playback rules; when nothing can play it says why.
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';
import { get } from '../api.js';
import { chatView, tts, ttsListeners, replyListeners, speak, stopSpeaking, toast, errorText, libraryListeners } from '../store.js';

/** @type {HTMLAudioElement | null} */
let audio = null;
/** Whether finished replies are spoken (the `tts.autoPlay` voice setting). */
let autoPlay = false;
/** Whether this page paused the audio because it was hidden (and so resumes it). */
let pausedHidden = false;

function loadAutoPlay() {
  get('/api/tts/settings').then(
    (s) => {
      autoPlay = !!(s && s.autoPlay);
      tts.background.value = !s || s.backgroundPlayback !== false;
    },
    () => {},
  );
}

function onVisibility() {
  if (!audio) return;
  if (document.hidden && !tts.background.value && tts.playing.value && !audio.paused) {
    pausedHidden = true;
    audio.pause();
  } else if (!document.hidden && pausedHidden) {
    pausedHidden = false;
    if (tts.playing.value) audio.play().catch(() => next());
  }
}

/** Plays `url` now (what played before is cut). @param {string} url */
function start(url) {
  pausedHidden = false;
  tts.playing.value = url;
  tts.last.value = url;
  if (!audio) return;
  audio.src = url;
  const p = audio.play();
  if (p && p.catch) p.catch(() => next());
  // Started while hidden (a queued reply): wait for the page like the rest of the speech.
  if (document.hidden && !tts.background.value) onVisibility();
}

function next() {
  const [head, ...rest] = tts.queue.value;
  tts.queue.value = rest;
  if (head) start(head);
  else {
    tts.playing.value = null;
    if (audio) audio.removeAttribute('src');
  }
}

function stopHere() {
  pausedHidden = false;
  tts.queue.value = [];
  tts.playing.value = null;
  if (audio) {
    audio.pause();
    audio.removeAttribute('src');
  }
}

/** A `tts` event of the global stream. @param {any} d */
function onTts(d) {
  if (!d || d.chatId !== chatView.id.value) return;
  if (d.action === 'stop') stopHere();
  else if (d.action === 'play' && typeof d.url === 'string') {
    if (d.queue && tts.playing.value) tts.queue.value = [...tts.queue.value, d.url];
    else {
      tts.queue.value = [];
      start(d.url);
    }
  }
}

/** A `reply` status event: a finished reply of this chat is spoken when auto-play is on. @param {any} d */
function onReply(d) {
  if (!autoPlay || !d || d.status !== 'finished' || d.chatId !== chatView.id.value) return;
  const chatId = d.chatId;
  // The reply's message is the chat's newest one once the reply has finished.
  get(`/api/chats/${chatId}/messages?limit=1`)
    .then((page) => {
      const m = page && page.messages && page.messages[page.messages.length - 1];
      if (m && m.role === 'assistant') return speak(chatId, { messageId: m.id, applyPlaybackRules: true, queue: true });
    })
    .catch(() => {});
}

/** @param {any} data */
function onLibrary(data) {
  if (data && (data.kind === 'setting' || data.kind === 'tts')) loadAutoPlay();
}

/** The open chat's player: an audio element and, while speaking, a Stop button. @param {{chatId: number}} props */
export function TtsPlayer({ chatId }) {
  const ref = useRef(/** @type {HTMLAudioElement | null} */ (null));
  useEffect(() => {
    audio = ref.current;
    loadAutoPlay();
    ttsListeners.add(onTts);
    replyListeners.add(onReply);
    libraryListeners.add(onLibrary);
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      ttsListeners.delete(onTts);
      replyListeners.delete(onReply);
      libraryListeners.delete(onLibrary);
      stopHere();
      audio = null;
    };
  }, [chatId]);
  const playing = tts.playing.value;
  const waiting = tts.queue.value.length;
  return html`<div class="tts-player" data-last-url=${tts.last.value || ''} data-playing=${playing ? 'true' : 'false'} data-background=${tts.background.value ? 'on' : 'off'}>
    <audio ref=${ref} preload="auto" onEnded=${next} onError=${() => { if (tts.playing.value) next(); }}></audio>
    ${playing
      ? html`<p class="row muted" role="status">Speaking${waiting ? ` (${waiting} waiting)` : ''}…
          <button type="button" class="small" onClick=${() => stopSpeaking(chatId).catch((e) => toast(errorText(e), 'error'))}>Stop speaking</button></p>`
      : null}
  </div>`;
}

/** "Speak" on a message. @param {{message: {id: number, content: string}}} props */
export function SpeakButton({ message: m }) {
  const chatId = chatView.id.value;
  const click = async () => {
    if (chatId == null) return;
    try {
      const out = await speak(chatId, { messageId: m.id, applyPlaybackRules: true });
      if (!out.playing) toast(out.reason || 'Nothing to speak', 'info');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };
  return html`<button type="button" class="small" aria-label="Speak" disabled=${!m.content.trim()} onClick=${click}>Speak</button>`;
}
