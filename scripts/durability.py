#!/usr/bin/env python3
"""kill -9 durability of `tavo serve` in the middle of streaming replies.

Starts a slow scripted provider (OpenAI Chat Completions, streaming) and `tavo serve` on a fresh
data directory, starts N replies (default 20), kills the server with SIGKILL while they stream,
then checks:

  - the database passes `PRAGMA integrity_check` and the server starts again on it;
  - every user message is there;
  - each partial reply is either absent or saved as a prefix of what the provider sent, marked
    `cancelled` (interrupted), and at most ~250 ms of streamed text behind what the provider
    had sent when the server died;
  - after the restart no reply is running or waiting: interrupted replies are cancelled, and the
    provider receives no new request (nothing is replayed).

Usage: scripts/durability.py [--tavo target/release/tavo] [--replies 20] [--kill-after 1.5]
Exit status 0 when every check holds. Everything listens on 127.0.0.1 only.
"""
import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNKS = 300
INTERVAL = 0.02  # seconds between provider events
WORD = "word "
SENT = {}  # the user message a request answers -> chunks written before the connection ended
LOCK = threading.Lock()
REQUESTS = [0]


class Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
        n = users[-1] if users and isinstance(users[-1], str) else json.dumps(users[-1:])
        with LOCK:
            REQUESTS[0] += 1
            SENT[n] = 0
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        try:
            for i in range(CHUNKS):
                chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                         "choices": [{"index": 0, "delta": {"content": WORD}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                with LOCK:
                    SENT[n] = i + 1
                time.sleep(INTERVAL)
            done = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"content-type": "application/json", "x-tavo-request": "1"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start_server(tavo, data_dir, port):
    proc = subprocess.Popen([tavo, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", data_dir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "RUST_LOG": "error"})
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            if call(base, "GET", "/api/health")[0] == 200:
                return proc, base
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise SystemExit("the server did not start: " + proc.stderr.read().decode(errors="replace"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tavo", default="target/release/tavo")
    ap.add_argument("--replies", type=int, default=20)
    ap.add_argument("--kill-after", type=float, default=1.5)
    args = ap.parse_args()

    provider = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    provider_url = f"http://127.0.0.1:{provider.server_address[1]}/v1"

    data_dir = tempfile.mkdtemp(prefix="tavo-durability-")
    port = free_port()
    proc, base = start_server(args.tavo, data_dir, port)
    status, _ = call(base, "POST", "/api/connections", {
        "name": "slow", "source": "custom", "protocol": "openai-chat", "baseUrl": provider_url,
        "model": "m", "parameters": {"stream": True}})
    assert status == 200, status
    chats, replies = [], {}
    for i in range(args.replies):
        status, created = call(base, "POST", "/api/library/chat", {"name": f"durability {i}"})
        assert status == 201, created
        chats.append(created["id"])
    for i, chat in enumerate(chats):
        status, started = call(base, "POST", f"/api/chats/{chat}/messages", {"content": f"message {i}"})
        assert status == 202, started
        replies[chat] = started["replyId"]
    time.sleep(args.kill_after)
    with LOCK:
        sent_at_kill = dict(SENT)
    if os.environ.get("DEBUG"):
        print("sent at kill:", sent_at_kill, "requests:", REQUESTS[0])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    requests_before = REQUESTS[0]

    failures = []
    db = sqlite3.connect(os.path.join(data_dir, "tavo.db"))
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    if integrity != "ok":
        failures.append(f"integrity_check: {integrity}")

    started = time.time()
    proc, base = start_server(args.tavo, data_dir, port)
    restart_ms = (time.time() - started) * 1000
    saved, absent, behind = 0, 0, []
    for i, chat in enumerate(chats):
        status, page = call(base, "GET", f"/api/chats/{chat}/messages?limit=10")
        msgs = page.get("messages", []) if status == 200 else []
        if not msgs or msgs[0].get("role") != "user" or msgs[0].get("content") != f"message {i}":
            failures.append(f"chat {chat}: the user message is missing ({status} {msgs[:1]})")
            continue
        answers = [m for m in msgs[1:] if m.get("role") == "assistant"]
        sent = sent_at_kill.get(f"message {i}", 0)
        if not answers:
            absent += 1
            behind.append(sent * INTERVAL * 1000)
        else:
            text = answers[-1].get("content", "")
            full = WORD * CHUNKS
            if not full.startswith(text):
                failures.append(f"chat {chat}: the saved reply is not a prefix of what was sent: {text[:60]!r}")
            mark = (answers[-1].get("tavoReply") or {}).get("status")
            if mark != "cancelled":
                failures.append(f"chat {chat}: the partial reply is marked {mark!r}, not cancelled")
            saved += 1
            behind.append(max(0, sent - text.count("word")) * INTERVAL * 1000)
        status, reply = call(base, "GET", f"/api/replies/{replies[chat]}")
        if status != 200 or reply.get("status") not in ("cancelled", "failed", "finished"):
            failures.append(f"reply {replies[chat]}: status {reply.get('status') if status == 200 else status} after restart")
    status, live = call(base, "GET", "/api/replies")
    if live:
        failures.append(f"replies still live after restart: {live}")
    time.sleep(0.5)
    if REQUESTS[0] != requests_before:
        failures.append(f"the provider received {REQUESTS[0] - requests_before} request(s) after the restart (a replay)")
    worst = max(behind) if behind else 0.0
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        failures.append("the server did not stop on SIGTERM within 15 s")

    print(f"replies: {args.replies}, killed after {args.kill_after}s; partial replies saved: {saved}, absent: {absent}; "
          f"integrity_check: {integrity}; restart to first answer: {restart_ms:.0f} ms; "
          f"streamed text lost at the kill: worst {worst:.0f} ms of provider output")
    if worst > 400:
        failures.append(f"up to {worst:.0f} ms of streamed text lost (expected at most ~250 ms plus in-flight)")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
