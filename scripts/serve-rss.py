#!/usr/bin/env python3
"""Memory of a release `tavo serve`: idle, and after its first reply (issue 29).

For each binary given, RUNS fresh processes, interleaved (A B A B …) so that both see the same
machine: start `tavo serve` on an empty data dir, wait for the first answered `/api/health`,
wait 1 s, read VmRSS / RssAnon / RssFile from /proc/PID/status (idle); then add a connection
to a local mock OpenAI provider (a few streamed deltas), start one reply in a new chat with a
new character and read them again once it has finished, and 1 s later. The first reply's time (POST to
`finished`) is printed too.

With --floor FLOOR, the floor binary (`cargo build --release -p tavo-server --example
idle_floor`: the same runtime and libraries answering /api/health and nothing else) is measured
idle in the same interleaved runs, so the figure comes with what the machine and the
dependencies cost before tavo adds anything.

Usage: python3 scripts/serve-rss.py [--runs 5] [--model gpt-4o] [--floor FLOOR] TAVO [TAVO …]
"""
import argparse
import http.server
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

HEADERS = {"x-tavo-request": "1", "content-type": "application/json"}


class Mock(http.server.BaseHTTPRequestHandler):
    """An OpenAI chat-completions stream of five deltas."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": []}
        for i in range(5):
            chunk["choices"] = [{"index": 0, "delta": {"content": f"word{i} "}}]
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        chunk["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
        self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    return fields


def call(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers=HEADERS)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {path}: {e.code} {e.read().decode()}") from None


def wait_finished(base, reply):
    req = urllib.request.Request(f"{base}/api/replies/{reply}/events", headers=HEADERS)
    with urllib.request.urlopen(req, timeout=60) as r:
        event = None
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "finished":
                return json.loads(line[5:]).get("status")
    return None


def one_run(tavo, mock_port, model, idle_only=False):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        child = subprocess.Popen(
            [tavo, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", data],
            env=dict(os.environ, RUST_LOG="error"),
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 20
            while True:
                try:
                    urllib.request.urlopen(base + "/api/health", timeout=1).read()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise RuntimeError("no answer within 20 s")
                    time.sleep(0.002)
            time.sleep(1)
            idle = status(child.pid)
            if idle_only:
                return idle, None, None, None, None
            call(base, "POST", "/api/connections", {
                "name": "mock", "source": "custom", "protocol": "openai-chat",
                "baseUrl": f"http://127.0.0.1:{mock_port}/v1", "model": model,
                "apiKey": "sk-rss-0123456789abcdef", "parameters": {"stream": True},
            })
            character = call(base, "POST", "/api/library/character", {
                "name": "Sera", "description": "A guardian of the forest, calm and watchful.",
                "firstMes": "Hello, traveller. The forest is quiet today.",
            })["id"]
            chat = call(base, "POST", "/api/library/chat", {"name": "rss", "characters": [character]})["id"]
            t = time.perf_counter()
            started = call(base, "POST", f"/api/chats/{chat}/messages", {"content": "go"})
            outcome = wait_finished(base, started["replyId"])
            first_reply = time.perf_counter() - t
            after = status(child.pid)
            time.sleep(1)
            later = status(child.pid)
            return idle, after, later, first_reply, outcome
        finally:
            child.kill()
            child.wait()


def fmt(values):
    return f"{min(values):.1f}–{max(values):.1f} (median {statistics.median(values):.1f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tavo", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", default="gpt-4o")
    ap.add_argument("--floor", help="the idle_floor example binary, measured idle beside")
    args = ap.parse_args()
    mock = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mock)
    threading.Thread(target=mock.serve_forever, daemon=True).start()
    results = {t: [] for t in args.tavo}
    floor = []
    for _ in range(args.runs):
        for tavo in args.tavo:
            results[tavo].append(one_run(tavo, mock.server_address[1], args.model))
        if args.floor:
            floor.append(one_run(args.floor, mock.server_address[1], args.model, idle_only=True))
    if floor:
        print(f"{args.floor} (the floor, {len(floor)} runs):")
        for key in ("VmRSS", "RssAnon", "RssFile"):
            print(f"  {'idle, 1 s after /api/health':28} {key:8} {fmt([r[0][key] for r in floor])} MB")
    for tavo, runs in results.items():
        print(f"{tavo} ({len(runs)} runs, model {args.model}):")
        for label, at in (("idle, 1 s after /api/health", 0), ("after the first reply", 1),
                          ("1 s after it", 2)):
            for key in ("VmRSS", "RssAnon", "RssFile"):
                print(f"  {label:28} {key:8} {fmt([r[at][key] for r in runs])} MB")
        print(f"  first reply (POST to finished): {fmt([r[3] * 1000 for r in runs])} ms; "
              f"outcomes {sorted(set(str(r[4]) for r in runs))}")


if __name__ == "__main__":
    main()
