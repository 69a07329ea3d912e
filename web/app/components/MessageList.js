// The messages of the open chat, windowed: the DOM holds at most MAX messages around what is
// on screen, so a chat of 100,000 messages costs what one of 50 does. Scrolling near the top
// widens the window upwards and, past the loaded pages, fetches the previous page; the far
// end of the window is dropped. The scroll position is kept on the message that was on screen.
// A message whose script ran stays mounted, hidden, outside the window (BubbleFrame's
// keptFrames), so its script does not run again when it comes back.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { chatView, currentReply, loadOlder } from '../store.js';
import { MessageItem, StreamingItem } from './MessageItem.js';
import { keptFrames } from './BubbleFrame.js';

const WINDOW = 40;
const STEP = 25;
const MAX = 90;
const EDGE = 400;

export function MessageList() {
  const msgs = chatView.messages.value;
  const reply = currentReply.value;
  const scroller = useRef(/** @type {HTMLDivElement|null} */ (null));
  const content = useRef(/** @type {HTMLDivElement|null} */ (null));
  const stick = useRef(true);
  const firstFloor = useRef(/** @type {number|null} */ (null));
  const anchor = useRef(/** @type {{key: string, top: number} | null} */ (null));
  const [win, setWin] = useState({ start: Math.max(0, msgs.length - WINDOW), end: msgs.length });
  /** The last message's id and the message count at the previous render of `msgs`. */
  const lastId = useRef(/** @type {number|null} */ (msgs.length ? msgs[msgs.length - 1].id : null));
  const shownLen = useRef(msgs.length);

  // Keep the window on the same messages when pages are prepended. A window that reached the
  // last message keeps reaching it as messages arrive — scrolled up or not, a new message is in
  // the DOM, below what is being read, and only the far end is dropped past MAX. A message the
  // user sent brings the list back to the bottom, as a reply to it will stream there.
  useLayoutEffect(() => {
    const first = msgs.length ? msgs[0].floor : null;
    const prepended = firstFloor.current != null && first != null && first < firstFloor.current
      ? msgs.findIndex((m) => m.floor === firstFloor.current)
      : 0;
    firstFloor.current = first;
    const last = msgs.length ? msgs[msgs.length - 1] : null;
    const appended = last != null && last.id !== lastId.current && lastId.current != null;
    if (appended && last.role === 'user') stick.current = true;
    lastId.current = last ? last.id : null;
    const hadTail = shownLen.current;
    shownLen.current = msgs.length;
    setWin((w) => {
      let start = w.start + Math.max(0, prepended);
      let end = w.end + Math.max(0, prepended);
      const followTail = w.end === 0 || w.end >= hadTail;
      if (stick.current || end > msgs.length || followTail) {
        end = msgs.length;
        if (stick.current) start = Math.max(0, Math.min(start, end - WINDOW));
        if (end - start > MAX) {
          if (!stick.current) remember();
          start = end - MAX;
        }
      }
      if (start > end) start = Math.max(0, end - WINDOW);
      return start === w.start && end === w.end ? w : { start, end };
    });
  }, [msgs]);

  const remember = () => {
    const el = scroller.current;
    if (!el) return;
    const top = el.scrollTop;
    for (const child of /** @type {HTMLElement[]} */ ([...(content.current?.children || [])])) {
      if (!child.hidden && child.offsetTop + child.offsetHeight > top && child.dataset.key) {
        anchor.current = { key: child.dataset.key, top: child.offsetTop - top };
        return;
      }
    }
  };

  // After the window moved: put the remembered message back where it was, or stay at the bottom.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (stick.current) {
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const node = /** @type {HTMLElement|null} */ (content.current?.querySelector(`[data-key="${anchor.current.key}"]`) || null);
      if (node) el.scrollTop = node.offsetTop - anchor.current.top;
    }
    anchor.current = null;
    // A window moved at an edge can leave the view at that edge with more beyond it (extended
    // downwards while at the bottom, the content keeps its height and the scroll position its
    // value, so no scroll event follows): look again once laid out, as a scroll would.
    const raf = requestAnimationFrame(() => edgeCheck.current());
    return () => cancelAnimationFrame(raf);
  }, [win]);

  // A streaming reply grows the content: follow it while the user is at the bottom.
  useEffect(() => {
    const el = scroller.current;
    const inner = content.current;
    if (!el || !inner || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(inner);
    return () => ro.disconnect();
  }, []);

  /** The newest onScroll, for the check after a window move. */
  const edgeCheck = useRef(() => {});
  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const below = el.scrollHeight - el.scrollTop - el.clientHeight;
    stick.current = below < 40;
    // Near the top, widen upwards (or fetch the previous page); near the bottom, downwards. A
    // short list is near both: whichever has something to add does it.
    if (el.scrollTop < EDGE && win.start > 0) {
      remember();
      const start = Math.max(0, win.start - STEP);
      setWin({ start, end: Math.min(win.end, start + MAX) });
    } else if (below < EDGE && win.end < msgs.length) {
      remember();
      const end = Math.min(msgs.length, win.end + STEP);
      setWin({ start: Math.max(win.start, end - MAX), end });
    } else if (el.scrollTop < EDGE && chatView.hasMore.value && !chatView.loadingOlder.value) {
      loadOlder();
    }
  };

  edgeCheck.current = onScroll;
  const kept = keptFrames.value.chatId === chatView.id.value ? new Set(keptFrames.value.ids) : null;
  /** The window's messages, and the kept ones outside it (parked). */
  const shown = kept
    ? msgs.flatMap((m, i) => (i >= win.start && i < win.end ? [{ m, parked: false }] : kept.has(m.id) ? [{ m, parked: true }] : []))
    : msgs.slice(win.start, win.end).map((m) => ({ m, parked: false }));
  const lastAssistant = [...msgs].reverse().find((m) => m.role === 'assistant');
  const streamingId = reply && reply.status.value !== 'finished' ? reply.messageId.value : null;
  const streamingShown = reply && streamingId != null && msgs.some((m) => m.id === streamingId);
  const atTail = win.end === msgs.length;
  return html`<div class="messages" ref=${scroller} onScroll=${onScroll} tabIndex="0" role="region" aria-label="Messages">
    <div class="messages-inner" ref=${content} role="log" aria-live="off">
      ${win.start === 0 && !chatView.hasMore.value && msgs.length
        ? html`<p class="muted start-of-chat">Start of the chat</p>`
        : html`<p class="muted start-of-chat" aria-busy=${chatView.loadingOlder.value}>${chatView.loadingOlder.value ? 'Loading older messages…' : msgs.length ? 'Scroll up for older messages' : ''}</p>`}
      ${shown.map(({ m, parked }) =>
        m.id === streamingId && reply
          ? html`<${StreamingItem} key=${m.id} message=${m} reply=${reply} />`
          : html`<${MessageItem} key=${m.id} message=${m} isLast=${lastAssistant === m} parked=${parked} />`,
      )}
      ${reply && !streamingShown && atTail && reply.kind !== 'impersonate' && reply.status.value !== 'finished' && !reply.error.value
        ? html`<${StreamingItem} key="streaming" message=${null} reply=${reply} />`
        : null}
    </div>
  </div>`;
}
