#!/usr/bin/env python3
"""A server with accounts under load, beside a single-user server in the same run (issue 32).

Builds USERS users (`tavo user add`, the password on stdin), each with one connection to the mock
provider, one character and CHATS chats; starts `tavo serve --accounts`; then starts REPLIES
streaming replies at once, each from a different user, while READERS threads read the latest
50-message page of chats of other users. Measured:
  - reply wall time, POST to the `finished` event (p50 / p99), and its overhead over the mock's
    own streaming time (EVENTS deltas every INTERVAL ms): what the server adds to a reply;
  - latest-page read latency during the replies (p50 / p99) and reads/s;
  - relay latency per event (the load example's method, crates/server/examples/load): the mock
    script says `"stamp": true`, so the mock writes its send time (`<t:NANOS>`, ns since the
    epoch) into each text delta as it hands the frame to its socket, after its pacing sleep; the
    client subtracts it from the arrival time (`time.time_ns()`) of the `text_delta` event that
    carries it (p50 / p99 over every delta of every reply).
The same measures are then taken on a single-user `tavo serve` of one library with the same
number of chats and replies in the same run, so the two columns share the machine's state.
After each server's run the same client code streams REPLIES answers from the mock directly
(`/v1/chat/completions`, one thread each, the same READERS reading pages of that server
meanwhile), the baseline: the Python client (threads, GIL) and the machine add latency of their
own, which the direct path measures too. Relay overhead = via tavo − direct, per percentile;
accounts − single-user compares the two servers. The direct streams' wall time is printed too:
the mock also paces its role, finish and `[DONE]` frames (EVENTS + 3 pauses) and its timer
overshoots each pause a little, so its own stream lasts longer than EVENTS × INTERVAL; reply
wall − direct stream wall is what the server adds to a reply's wall time.

Usage: python3 scripts/bench-accounts.py [--tavo target/release/tavo]
           [--mock target/release/mock-provider] [--users 100] [--chats 10] [--replies 50]
           [--readers 8] [--events 40] [--interval-ms 25]
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request


def start(cmd, env=None):
    """Starts a program that prints its URL on stdout first; answers (process, url)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env=dict(os.environ, RUST_LOG="warn", **(env or {})))
    url = p.stdout.readline().strip()
    if not url.startswith("http"):
        p.kill()
        raise SystemExit(f"{cmd[0]} did not start: {url!r}")
    return p, url


class Api:
    """JSON over HTTP with an optional session cookie."""

    def __init__(self, base, cookie=None):
        self.base, self.cookie = base, cookie

    def call(self, method, path, body=None, timeout=30):
        headers = {"content-type": "application/json", "x-tavo-request": "1"}
        if self.cookie:
            headers["cookie"] = self.cookie
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read()
            return json.loads(text) if text else None, r.headers

    def login(self, name, password):
        _, headers = self.call("POST", "/api/session", {"name": name, "password": password})
        return Api(self.base, headers.get("set-cookie", "").split(";")[0])


def fill(api, mock_url, chats):
    api.call("POST", "/api/connections", {"name": "mock", "source": "custom", "protocol": "openai-chat",
                                          "baseUrl": mock_url + "/v1", "model": "mock-model", "default": True})
    c, _ = api.call("POST", "/api/library/character", {"name": "Bench", "firstMes": "Ready."})
    ids = []
    for i in range(chats):
        chat, _ = api.call("POST", "/api/chats", {"characters": [c["id"]], "name": f"chat {i}", "greeting": False})
        for j in range(60):
            api.call("POST", f"/api/ops/tavo_message_append?chat={chat['id']}",
                     {"message": {"content": f"message {j} of chat {i}, a few words to read back"}})
        ids.append(chat["id"])
    return ids


STAMP = re.compile(r"<t:(\d+)>")


class Stamps:
    """Latencies (ns) of the mock's `<t:NANOS>` stamps in a stream of text pieces; a stamp split
    across pieces is read when its end arrives."""

    def __init__(self):
        self.pending, self.latencies = "", []

    def feed(self, text):
        arrived = time.time_ns()
        self.pending += text
        end = 0
        for m in STAMP.finditer(self.pending):
            self.latencies.append(arrived - int(m.group(1)))
            end = m.end()
        self.pending = self.pending[end:]


def sse(lines):
    """(event, data) of each SSE event, as soon as its blank line is read."""
    event, data = "message", []
    for raw in lines:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def reply(api, chat, out, lats):
    """POSTs a message and follows the reply's events to `finished`; records the wall time and
    the latency of every stamped text delta."""
    t0 = time.perf_counter()
    r, _ = api.call("POST", f"/api/chats/{chat}/messages", {"content": "go"})
    headers = {"x-tavo-request": "1"}
    if api.cookie:
        headers["cookie"] = api.cookie
    req = urllib.request.Request(api.base + f"/api/replies/{r['replyId']}/events", headers=headers)
    stamps = Stamps()
    with urllib.request.urlopen(req, timeout=120) as s:
        for event, data in sse(s):
            if event == "text_delta":
                stamps.feed(json.loads(data).get("text", ""))
            elif event == "finished":
                break
    out.append(time.perf_counter() - t0)
    lats.extend(stamps.latencies)


def direct(mock_url, out, lats):
    """Streams one answer from the mock itself, with the same client code; records the wall time
    and the latency of every stamped delta."""
    t0 = time.perf_counter()
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    req = urllib.request.Request(mock_url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 method="POST", headers={"content-type": "application/json"})
    stamps = Stamps()
    with urllib.request.urlopen(req, timeout=120) as s:
        for _, data in sse(s):
            if data == "[DONE]":
                break
            for choice in json.loads(data).get("choices", []):
                stamps.feed((choice.get("delta") or {}).get("content") or "")
    out.append(time.perf_counter() - t0)
    lats.extend(stamps.latencies)


def read_pages(apis_chats, stop, out):
    i = 0
    while not stop.is_set():
        api, chat = apis_chats[i % len(apis_chats)]
        i += 1
        t0 = time.perf_counter()
        api.call("GET", f"/api/chats/{chat}/messages?limit=50")
        out.append(time.perf_counter() - t0)


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def run(streams, readers_of, args):
    """Runs the streams (one thread each, `target(*a, walls, lats)`) and the readers at once;
    answers (walls, per-event latencies in ns, reads, span)."""
    walls, lats, reads, stop = [], [], [], threading.Event()
    readers = [threading.Thread(target=read_pages, args=(readers_of, stop, reads)) for _ in range(args.readers)]
    for t in readers:
        t.start()
    time.sleep(0.3)
    reads.clear()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=target, args=(*a, walls, lats)) for target, a in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    span = time.perf_counter() - t0
    stop.set()
    for t in readers:
        t.join()
    return walls, lats, reads, span


def ms(ns):
    return ns / 1e6


def measure(label, repliers, readers_of, mock_url, args):
    """Runs the replies and the readers at once, then the direct baseline; prints the figures and
    answers (via-tavo latencies, direct latencies) in ns."""
    walls, lats, reads, span = run([(reply, (api, chat)) for api, chat in repliers], readers_of, args)
    stream = args.events * args.interval_ms / 1000
    print(f"{label}: {len(walls)} replies in {span:.2f} s; reply wall p50 {pct(walls, 50) * 1000:.0f} ms "
          f"p99 {pct(walls, 99) * 1000:.0f} ms (the mock streams for {stream * 1000:.0f} ms: overhead p50 "
          f"{(pct(walls, 50) - stream) * 1000:.0f} ms, p99 {(pct(walls, 99) - stream) * 1000:.0f} ms); "
          f"latest-page reads during them: {len(reads) / span:.0f}/s, p50 {pct(reads, 50) * 1000:.1f} ms, "
          f"p99 {pct(reads, 99) * 1000:.1f} ms")
    expected = len(repliers) * args.events
    dwalls, dlats, _, _ = run([(direct, (mock_url,)) for _ in repliers], readers_of, args)
    print(f"{label}: per-event latency, mock stamp → client: via tavo p50 {ms(pct(lats, 50)):.2f} ms "
          f"p99 {ms(pct(lats, 99)):.2f} ms ({len(lats)} of {expected} deltas); direct from the mock, "
          f"{len(dwalls)} streams at once right after (stream wall p50 {pct(dwalls, 50) * 1000:.0f} ms "
          f"p99 {pct(dwalls, 99) * 1000:.0f} ms: the reply wall is {(pct(walls, 50) - pct(dwalls, 50)) * 1000:.0f} / "
          f"{(pct(walls, 99) - pct(dwalls, 99)) * 1000:.0f} ms over it), "
          f"p50 {ms(pct(dlats, 50)):.2f} ms "
          f"p99 {ms(pct(dlats, 99)):.2f} ms ({len(dlats)} deltas); relay overhead (via tavo − direct) "
          f"p50 {ms(pct(lats, 50) - pct(dlats, 50)):.2f} ms p99 {ms(pct(lats, 99) - pct(dlats, 99)):.2f} ms")
    return lats, dlats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tavo", default="target/release/tavo")
    ap.add_argument("--mock", default="target/release/mock-provider")
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--replies", type=int, default=50)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--events", type=int, default=40)
    ap.add_argument("--interval-ms", type=int, default=25)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="tavo-bench-accounts-")
    script = os.path.join(root, "script.json")
    with open(script, "w") as f:
        json.dump({"turns": [{"text": "word " * args.events, "chunk": 5, "delayMs": args.interval_ms,
                              "stamp": True}],
                   "repeatLast": True}, f)
    mock, mock_url = start([args.mock, "--port", "0", "--script", script])
    procs = [mock]
    try:
        data = os.path.join(root, "accounts")
        t0 = time.perf_counter()
        for i in range(args.users):
            subprocess.run([args.tavo, "--data-dir", data, "user", "add", f"user{i}"] + (["--admin"] if i == 0 else []),
                           input=f"password-{i:04d}\n", text=True, check=True, capture_output=True)
        print(f"{args.users} users added in {time.perf_counter() - t0:.1f} s (Argon2id each)")
        server, url = start([args.tavo, "--data-dir", data, "serve", "--accounts", "--addr", "127.0.0.1:0"])
        procs.append(server)
        users = []
        t0 = time.perf_counter()
        for i in range(args.users):
            api = Api(url).login(f"user{i}", f"password-{i:04d}")
            users.append((api, fill(api, mock_url, args.chats)))
        print(f"{args.users} users × {args.chats} chats × 60 messages filled in {time.perf_counter() - t0:.1f} s")
        repliers = [(api, chats[0]) for api, chats in users[: args.replies]]
        readers_of = [(api, chats[1]) for api, chats in users[args.replies:] or users]
        acc, acc_direct = measure("accounts", repliers, readers_of, mock_url, args)

        single = os.path.join(root, "single")
        server1, url1 = start([args.tavo, "--data-dir", single, "serve", "--addr", "127.0.0.1:0"], {"TAVO_TOKEN": ""})
        procs.append(server1)
        api1 = Api(url1)
        chats1 = fill(api1, mock_url, max(args.replies, args.chats) + 1)
        repliers1 = [(api1, c) for c in chats1[: args.replies]]
        one, one_direct = measure("single-user", repliers1, [(api1, chats1[-1])], mock_url, args)
        diff = [ms(pct(acc, p) - pct(one, p)) for p in (50, 99)]
        over = [ms(pct(acc, p) - pct(acc_direct, p) - pct(one, p) + pct(one_direct, p)) for p in (50, 99)]
        print(f"accounts − single-user, per-event latency via tavo: p50 {diff[0]:+.2f} ms p99 {diff[1]:+.2f} ms; "
              f"of the relay overheads (each against its own direct run): p50 {over[0]:+.2f} ms "
              f"p99 {over[1]:+.2f} ms")
    finally:
        for p in procs:
            p.kill()


if __name__ == "__main__":
    main()
