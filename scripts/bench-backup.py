#!/usr/bin/env python3
"""Backup and restore of a 100,000-message library with the release `tavo` binary.

Builds a scratch library (10 SillyTavern chats of 10,000 messages each, imported with `tavo import`,
plus 200 files of 64 KiB in the global file storage), then times, RUNS times each:
  - `tavo backup -o lib.tavobackup` (while nothing else runs),
  - `tavo backup` while `tavo serve` on the same library answers requests (with --serve),
  - `tavo restore lib.tavobackup` into an empty library,
  - `tavo restore lib.tavobackup --yes` over the full library.
Prints wall and CPU (user+sys of the child) per step, the database and backup sizes.

Usage: python3 scripts/bench-backup.py [--tavo target/release/tavo] [--runs 3] [--messages 100000] [--serve]
"""
import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request


def run(tavo, data, *args):
    env = dict(os.environ, TAVO_DATA_DIR=data, RUST_LOG="warn", NO_COLOR="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([tavo, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"tavo {' '.join(args)} failed: {p.stderr.strip()}")
    return wall, cpu, p.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_pages(port, stop, out):
    """GETs the latest 50 messages of chat 1 in a loop until `stop`, recording each latency."""
    while not stop.is_set():
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/chats/1/messages?limit=50", timeout=10) as r:
            r.read()
        out.append(time.perf_counter() - t0)


def make_library(tavo, root, messages):
    data = os.path.join(root, "full")
    chats = 10
    per_chat = messages // chats
    # Varied text (30 words from a 5,000-word vocabulary), so the backup compresses like a real chat.
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    for c in range(chats):
        path = os.path.join(root, f"chat{c}.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps({"user_name": "You", "character_name": "Seraphina",
                                "create_date": "2024-6-14@08h18m03s", "chat_metadata": {}}))
            for i in range(per_chat):
                text = f"Message {i} of chat {c}: " + " ".join(rng.choices(vocabulary, k=30))
                line = {"name": "You", "is_user": True, "mes": text, "send_date": "June 14, 2024 8:43am"} \
                    if i % 2 == 0 else \
                    {"name": "Seraphina", "is_user": False, "mes": text, "swipe_id": 0,
                     "swipes": [text, "an alternative reply"], "send_date": "June 14, 2024 8:44am"}
                f.write("\n" + json.dumps(line))
        run(tavo, data, "import", path)
    files = os.path.join(data, "files", "global")
    os.makedirs(files, exist_ok=True)
    for i in range(200):
        with open(os.path.join(files, f"note-{i}.txt"), "wb") as f:
            f.write((f"file {i} " * 8192).encode()[:65536])
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tavo", default="target/release/tavo")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--serve", action="store_true", help="also back up while `tavo serve` runs")
    a = ap.parse_args()
    tavo = os.path.abspath(a.tavo)
    root = tempfile.mkdtemp(prefix="tavo-bench-backup-")
    try:
        t0 = time.perf_counter()
        data = make_library(tavo, root, a.messages)
        print(f"library: {a.messages} messages in 10 chats, 200 files of 64 KiB "
              f"(built in {time.perf_counter() - t0:.1f} s); "
              f"tavo.db {os.path.getsize(os.path.join(data, 'tavo.db')) / 1e6:.1f} MB")
        out = os.path.join(root, "lib.tavobackup")
        rows = {"backup": [], "backup while serving": [], "restore into empty": [], "restore over full": []}
        server, port, reads = None, free_port(), []
        if a.serve:
            env = dict(os.environ, TAVO_DATA_DIR=data, RUST_LOG="warn")
            server = subprocess.Popen([tavo, "serve", "--addr", f"127.0.0.1:{port}"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        try:
            for r in range(a.runs):
                if os.path.exists(out):
                    os.remove(out)
                key = "backup while serving" if server else "backup"
                if server:
                    stop = threading.Event()
                    reader = threading.Thread(target=read_pages, args=(port, stop, reads))
                    reader.start()
                wall, cpu, _ = run(tavo, data, "backup", "-o", out)
                if server:
                    stop.set()
                    reader.join()
                rows[key].append((wall, cpu))
                size = os.path.getsize(out)
                empty = os.path.join(root, f"empty{r}")
                wall, cpu, _ = run(tavo, empty, "restore", out)
                rows["restore into empty"].append((wall, cpu))
                wall, cpu, _ = run(tavo, empty, "restore", out, "--yes")
                rows["restore over full"].append((wall, cpu))
                shutil.rmtree(empty, ignore_errors=True)
        finally:
            if server:
                server.kill()
        print(f"backup file {size / 1e6:.1f} MB")
        for name, values in rows.items():
            if values:
                walls = ", ".join(f"{w:.2f}" for w, _ in values)
                cpus = ", ".join(f"{c:.2f}" for _, c in values)
                print(f"{name:<22} wall {walls} s; CPU {cpus} s")
        if reads:
            reads.sort()
            print(f"server during the backups: {len(reads)} latest-page reads of chat 1, "
                  f"p50 {reads[len(reads) // 2] * 1000:.1f} ms, max {reads[-1] * 1000:.1f} ms")
        print(f"load average {os.getloadavg()}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
