#!/usr/bin/env python3
"""Replicas of `tavo serve --accounts` on one PostgreSQL database, beside SQLite.

Setup, once per database: USERS users (`tavo user add`, the password on stdin; user0 admin), and
in each user's library CARDS character cards (JSON CCv2 files, the first named "Bench"), one chat
of MESSAGES messages bound to "Bench" (one SillyTavern JSONL file, as the load example's
`big_chat()` builds it) — both through ONE `tavo --user NAME import --json …` process per user —
and a connection to the mock provider (`tavo --user NAME connection add mock …`). JOBS users are
set up at a time; progress and the setup time are printed. The SQLite data folder is set up for
the mode `sqlite`; one fresh PostgreSQL database (`CREATE DATABASE tavo_bench_…` on the server of
--database, or of a throwaway server started with scripts/throwaway-postgres.sh when --database
is absent) is loaded once and shared by pg1, pg2 and pg3 (and failover).

Each mode then starts its replicas — `sqlite`: one `tavo --data-dir DIR serve --accounts`;
`pgN`: N × `tavo --database URL --data-dir OWN_EMPTY_DIR serve --accounts` (no shared disk) —
logs every user in (`POST /api/session`) on a replica chosen round-robin (the session is in the
database, so the cookie works on every replica), warms up (one reply per replica: the first
prompt a process builds loads the tokenizer; then one latest-page read per user per replica, so
every library is open everywhere, as in a server that has been up a while), and runs the phase:
  - REPLIES replier threads, one per user (users 0…REPLIES-1), each POSTing
    `/api/chats/{id}/replies {"type":"normal","message":"go"}` to replica j mod N and following
    `GET /api/replies/{id}/events` to `finished` on replica j+1 mod N when N > 1 (the events come
    through the database: cross-replica following), then starting the next reply at once, until
    READ_SECS have passed (every replier runs at least one reply): REPLIES streams are live the
    whole phase. The mock streams EVENTS stamped deltas INTERVAL ms apart per reply.
  - READERS reader threads reading `GET /api/chats/{id}/messages?limit=50` (the latest page of a
    MESSAGES-message chat) of random other users (users REPLIES…; all users if there are no
    others), round-robin over the replicas, on keep-alive connections, throughout.
Measured over the phase (from the repliers' start to the last one's `finished`):
  - requests/s: the requests answered (reply POSTs answered 202 + event streams read to
    `finished` + page reads answered 200) per second; errors (any other answer, a reply that
    ended other than `finished`, a transport error) are counted apart and the first few printed;
  - latest page: reads/s, p50 / p99 of each read's time (request sent → body read);
  - reply wall, POST → `finished` (p50 / p99);
  - relay latency per delta (crates/server/examples/load's method): the mock's script says
    `"stamp": true`, so each text delta carries the mock's send time `<t:NANOS>` (ns since the
    epoch, read after its pacing sleep); the client subtracts it from the arrival time
    (`time.time_ns()`) of the `text_delta` event carrying it (p50 / p99 over every delta). Right
    after the phase the same client streams REPLIES answers straight from the mock at once
    (`/v1/chat/completions`, readers still running), the baseline: relay overhead = via tavo −
    direct, per percentile (the Python client and the machine add latency of their own, which the
    direct path measures too);
  - per replica: RSS after the warm-up and its peak during the phase (VmRSS of /proc/PID/status
    sampled every 100 ms), CPU seconds during the phase (utime + stime of /proc/PID/stat);
  - database CPU: CPU seconds during the phase of every process whose comm is `postgres`
    (utime + stime, plus cutime + cstime so that backends that exit during the phase count
    too; only a server on this machine is seen); the mock's and this client's CPU seconds; the
    machine's busy cores (/proc/stat) out of os.cpu_count().
One JSON object per mode is printed (`RESULT {...}`), then a table of the modes side by side and,
per mode, whether the machine's cores were saturated (a hint: busy ≥ 90 % of the cores).

Failover (after pg2's phase on its replicas, or the mode `failover` alone on 2 new replicas),
FAILOVER_RUNS times, each in another user's chat: a second mock streams FAILOVER_EVENTS stamped
deltas INTERVAL ms apart (connection `long` in that user's library); the reply is POSTed to
replica A and followed from replica B; FAILOVER_AFTER s after the POST, A gets `kill -9`.
Measured: the time from the kill until `GET /api/replies/{id}` on B says `"status":"cancelled"`
(polled every 50 ms): the chat is free; then a new reply in the same chat is POSTed to B (202
expected; retried every 50 ms on 409, the time to 202 is reported) and followed to `finished`.
Events lost: the reply's stored events (`SELECT seq FROM tavo_cluster.reply_events`, through
psql) against the ids B's follower delivered and those a replay from B (`Last-Event-ID: 0`
after the failover) sends: missing = stored − (delivered ∪ replayed), must be 0. A is then
replaced by a new replica (its own new empty folder) for the next run.

Usage: python3 scripts/bench-replicas.py [--tavo target/release/tavo]
           [--mock target/release/mock-provider] [--database postgres://…] [--users 1000]
           [--cards 5] [--messages 1000] [--replies 200] [--readers 8] [--events 40]
           [--interval-ms 25] [--read-secs 10] [--modes sqlite,pg1,pg2,pg3] [--jobs 2]
           [--failover-runs 3] [--failover-events 400] [--failover-after 1.0] [--keep]
Only 127.0.0.1 is contacted (and the PostgreSQL server of --database).
"""
import argparse
import concurrent.futures
import glob
import http.client
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

CLK = os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))


# --- processes and /proc ---------------------------------------------------------------------

def start(cmd, log_path, env=None, timeout=60):
    """Starts a program that prints its URL on stdout first; answers (process, url)."""
    log = open(log_path, "ab")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                         env=dict(os.environ, RUST_LOG="warn", **(env or {})))
    log.close()
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    url = p.stdout.readline().strip() if ready else ""
    if not url.startswith("http"):
        p.kill()
        p.wait()
        raise SystemExit(f"{' '.join(cmd)} did not start: {url!r} (log: {log_path})")
    return p, url


def stop(p, grace=15):
    """SIGTERM (a replica stops gracefully, giving its leases back), SIGKILL after `grace` s."""
    if p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def stat_fields(pid):
    """The fields of /proc/PID/stat after the comm (index 0 = field 3, state), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_secs(pid):
    """utime + stime of a process in seconds (0 once it is gone)."""
    f = stat_fields(pid)
    return (int(f[11]) + int(f[12])) / CLK if f else 0.0


def postgres_cpu(postmaster=None):
    """Σ utime + stime + cutime + cstime (s) of the processes named `postgres` — the postmaster
    `postmaster` and its children when it is known, else every one on the machine: the
    difference of two readings is the database's CPU in between, backends that exited meanwhile
    included (their time moved into the postmaster's cutime/cstime when it reaped them)."""
    total = 0.0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/comm") as f:
                if f.read().strip() != "postgres":
                    continue
        except OSError:
            continue
        f = stat_fields(d)
        if f and (postmaster is None or int(d) == postmaster or int(f[1]) == postmaster):
            total += sum(int(x) for x in f[11:15]) / CLK
    return total


def machine_jiffies():
    """(busy, total) jiffies of all cores from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler:
    """The peak VmRSS of some processes, sampled every 100 ms on a thread of its own."""

    def __init__(self, pids):
        self.pids, self.peak, self.stop_ = list(pids), {p: 0 for p in pids}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_.is_set():
            for p in self.pids:
                self.peak[p] = max(self.peak[p], rss_kb(p))
            self.stop_.wait(0.1)

    def stop(self):
        self.stop_.set()
        self.thread.join()
        return self.peak


# --- HTTP ------------------------------------------------------------------------------------

class HttpError(Exception):
    def __init__(self, status, method, path, body):
        super().__init__(f"{method} {path}: HTTP {status}: {body[:300]!r}")
        self.status = status


_local = threading.local()
_RETRY = (http.client.RemoteDisconnected, http.client.CannotSendRequest, ConnectionResetError,
          BrokenPipeError, ConnectionAbortedError)


class Api:
    """JSON over HTTP to one server with an optional session cookie; a keep-alive connection per
    thread and server."""

    def __init__(self, base, cookie=None):
        u = urllib.parse.urlsplit(base)
        self.base, self.host, self.port, self.cookie = base, u.hostname, u.port, cookie

    def headers(self, extra=None, json_body=False):
        h = {"x-tavo-request": "1"}
        if json_body:
            h["content-type"] = "application/json"
        if self.cookie:
            h["cookie"] = self.cookie
        h.update(extra or {})
        return h

    def _conn(self):
        pool = _local.__dict__.setdefault("pool", {})
        c = pool.get(self.base)
        if c is None:
            c = pool[self.base] = http.client.HTTPConnection(self.host, self.port, timeout=60)
        return c

    def _drop(self):
        c = _local.__dict__.setdefault("pool", {}).pop(self.base, None)
        if c is not None:
            c.close()

    def request(self, method, path, body=None, expect=(200, 201, 202, 204)):
        """Answers (status, headers, parsed JSON body or None); raises HttpError otherwise."""
        data = None if body is None else json.dumps(body).encode()
        headers = self.headers(json_body=data is not None)
        for attempt in (0, 1):
            c = self._conn()
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                raw = r.read()
                break
            except _RETRY:
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                self._drop()
                if attempt:
                    raise
            except Exception:
                self._drop()
                raise
        if r.will_close:
            self._drop()
        if r.status not in expect:
            raise HttpError(r.status, method, path, raw.decode(errors="replace"))
        ctype = r.headers.get("content-type", "")
        return r.status, r.headers, (json.loads(raw) if raw and "json" in ctype else None)

    def call(self, method, path, body=None):
        return self.request(method, path, body)[2]

    def login(self, name, password):
        _, headers, _ = self.request("POST", "/api/session", {"name": name, "password": password})
        cookie = headers.get("set-cookie", "").split(";")[0]
        if not cookie.startswith("tavo_account="):
            raise SystemExit(f"login of {name}: no tavo_account cookie ({headers.get('set-cookie')!r})")
        return cookie

    def follow(self, reply, on_event, last_event_id=None, timeout=120):
        """Reads `GET /api/replies/{reply}/events` on a connection of its own, calling
        `on_event(id, event, data)` per event until it answers False or the stream ends; answers
        the HTTP status (204: nothing more to send)."""
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        extra = {"accept": "text/event-stream"}
        if last_event_id is not None:
            extra["last-event-id"] = str(last_event_id)
        path = f"/api/replies/{reply}/events"
        try:
            c.request("GET", path, headers=self.headers(extra))
            r = c.getresponse()
            if r.status == 204:
                return 204
            if r.status != 200:
                raise HttpError(r.status, "GET", path, r.read().decode(errors="replace"))
            for eid, event, data in sse(r):
                if on_event(eid, event, data) is False:
                    break
            return r.status
        finally:
            c.close()


def sse(lines):
    """(id or None, event, data) of each SSE event, as soon as its blank line is read."""
    eid, event, data = None, "message", []
    for raw in lines:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield eid, event, "\n".join(data)
            eid, event, data = None, "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("id:"):
            v = line[3:].strip()
            eid = int(v) if v.isdigit() else None
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


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


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def r1(x, nd=1):
    return None if x is None or x != x else round(x, nd)


# --- PostgreSQL ------------------------------------------------------------------------------

def find_psql():
    if os.environ.get("TAVO_PG_BIN") and os.path.exists(os.path.join(os.environ["TAVO_PG_BIN"], "psql")):
        return os.path.join(os.environ["TAVO_PG_BIN"], "psql")
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", p)])
    if found:
        return found[-1]
    if shutil.which("psql"):
        return shutil.which("psql")
    raise SystemExit("no psql (apt-get install postgresql, or set TAVO_PG_BIN)")


def psql(url, sql):
    """Runs one statement; answers its rows' text (unaligned, tuples only)."""
    p = subprocess.run([find_psql(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"psql {sql!r}: {p.stderr.strip()}")
    return p.stdout


def find_postmaster(url):
    """The server's postmaster pid (`SHOW data_directory`, then its postmaster.pid), when the
    server runs on this machine and both are readable; else None."""
    try:
        with open(os.path.join(psql(url, "SHOW data_directory").strip(), "postmaster.pid")) as f:
            pid = int(f.readline())
        return pid if stat_fields(pid) else None
    except (RuntimeError, OSError, ValueError):
        return None


def with_database(url, name):
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + name, u.query, u.fragment))


def throwaway_start():
    script = os.path.join(HERE, "throwaway-postgres.sh")
    p = subprocess.run([script, "start"], capture_output=True, text=True)
    m = re.search(r"TAVO_TEST_POSTGRES=(\S+?);.*TAVO_TEST_POSTGRES_DIR=(\S+)", p.stdout)
    if p.returncode != 0 or not m:
        raise SystemExit(f"throwaway-postgres.sh start failed: {p.stderr.strip()[-800:]}")
    return m.group(1), m.group(2)


def throwaway_stop(pg_dir):
    subprocess.run([os.path.join(HERE, "throwaway-postgres.sh"), "stop", pg_dir],
                   capture_output=True, text=True)


# --- setup -----------------------------------------------------------------------------------

def write_files(root, args):
    """The card files (the first named "Bench") and the chat file every user imports."""
    paths = []
    for k in range(max(1, args.cards)):
        name = "Bench" if k == 0 else f"Card {k}"
        path = os.path.join(root, "files", f"card{k}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"spec": "chara_card_v2", "spec_version": "2.0",
                       "data": {"name": name, "description": f"{name}, a character of the replica bench.",
                                "first_mes": "Ready."}}, f)
        paths.append(path)
    chat = os.path.join(root, "files", "chat.jsonl")
    with open(chat, "w") as f:
        f.write(json.dumps({"user_name": "User", "character_name": "Bench", "create_date": "2024-01-01"}) + "\n")
        for i in range(args.messages):
            f.write(json.dumps({"name": "User" if i % 2 == 0 else "Bench", "is_user": i % 2 == 0,
                                "send_date": "2024-01-01 10:00",
                                "mes": f"message number {i}: the quick brown fox jumps over the lazy dog"}) + "\n")
    return paths + [chat]


def user_name(i):
    return f"user{i}"


def password(i):
    return f"password-{i:04d}"


def run_tavo(cmd, stdin=None, ok_if=None, tries=1):
    for attempt in range(tries):
        p = subprocess.run(cmd, input=stdin, text=True, capture_output=True)
        if p.returncode == 0 or (ok_if and ok_if in p.stderr):
            return p.stdout
        time.sleep(0.2 * (attempt + 1))
    raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-600:]}")


def setup(label, args, files, database, data, mock_url):
    """Users, their cards, chat and connection in the data folder `data` (and the database, if
    given); answers {user index: chat id}."""
    base = [args.tavo] + (["--database", database] if database else []) + ["--data-dir", data]
    chats, lock, t0 = {}, threading.Lock(), time.perf_counter()
    step = max(1, args.users // 20)

    def one(i):
        name = user_name(i)
        # The registry is one SQLite file on SQLite: a busy one is retried.
        run_tavo(base + ["user", "add", name] + (["--admin"] if i == 0 else []),
                 stdin=password(i) + "\n", ok_if="exists already", tries=5)
        out = run_tavo(base + ["--user", name, "import", "--json"] + files)
        chat = next((json.loads(line)["chatId"] for line in out.splitlines()
                     if line.strip() and "chatId" in json.loads(line)), None)
        if chat is None:
            raise SystemExit(f"{label}: the chat import of {name} answered no chatId: {out[-400:]!r}")
        run_tavo(base + ["--user", name, "connection", "add", "mock", "--protocol", "openai-chat",
                         "--base-url", mock_url + "/v1", "--model", "mock-model", "--source", "custom",
                         "--default"])
        with lock:
            chats[i] = chat
            n = len(chats)
            if n % step == 0 or n == args.users:
                print(f"setup {label}: {n}/{args.users} users, {time.perf_counter() - t0:.1f} s", flush=True)

    one(0)  # the first admin first: it gets the data folder's own library
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for f in [ex.submit(one, i) for i in range(1, args.users)]:
            f.result()
    took = time.perf_counter() - t0
    print(f"setup {label}: {args.users} users × ({len(files) - 1} cards + a {args.messages}-message chat "
          f"+ a connection) in {took:.1f} s ({args.jobs} at a time)", flush=True)
    return chats, took


# --- the measured phase ----------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.posts = self.streams = self.replies = 0
        self.walls, self.lats, self.reads, self.errors = [], [], [], []

    def error(self, what, e):
        with self.lock:
            self.errors.append(f"{what}: {type(e).__name__}: {e}")


def reply_once(post_api, follow_api, chat, tally, message="go", connection=None):
    """Starts a reply on one replica and follows it on another to `finished`; answers (wall s,
    stamp latencies in ns). A reply that ends other than `finished` raises."""
    t0 = time.perf_counter()
    body = {"type": "normal", "message": message}
    if connection:
        body["connection"] = connection
    started = post_api.request("POST", f"/api/chats/{chat}/replies", body, expect=(202,))[2]
    if tally:
        with tally.lock:
            tally.posts += 1
    stamps, end = Stamps(), {}

    def on(eid, event, data):
        if event == "text_delta":
            stamps.feed(json.loads(data).get("text", ""))
        elif event == "finished":
            end["status"] = json.loads(data).get("status")
            return False
        return True

    follow_api.follow(started["replyId"], on)
    if end.get("status") != "finished":
        raise RuntimeError(f"reply {started['replyId']} ended {end.get('status')!r}")
    if tally:
        with tally.lock:
            tally.streams += 1
    return time.perf_counter() - t0, stamps.latencies


def replier(job, deadline, tally):
    post_api, follow_api, chat = job
    while True:
        try:
            wall, lats = reply_once(post_api, follow_api, chat, tally)
            with tally.lock:
                tally.replies += 1
                tally.walls.append(wall)
                tally.lats.extend(lats)
        except Exception as e:  # noqa: BLE001 — counted and printed
            tally.error("reply", e)
            time.sleep(0.2)
        if time.perf_counter() >= deadline:
            return


def reader(targets, stop_, tally, seed):
    """Latest pages of random chats, replica after replica: records (end time, seconds)."""
    rnd, k = random.Random(seed), seed
    while not stop_.is_set():
        apis, chat = rnd.choice(targets)
        api = apis[k % len(apis)]
        k += 1
        t0 = time.perf_counter()
        try:
            api.call("GET", f"/api/chats/{chat}/messages?limit=50")
        except Exception as e:  # noqa: BLE001
            tally.error("page", e)
            time.sleep(0.05)
            continue
        t1 = time.perf_counter()
        tally.reads.append((t1, t1 - t0))


def direct(mock_url, walls, lats):
    """Streams one answer from the mock itself with the same kind of client code."""
    t0 = time.perf_counter()
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    req = urllib.request.Request(mock_url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 method="POST", headers={"content-type": "application/json"})
    stamps = Stamps()
    with urllib.request.urlopen(req, timeout=120) as s:
        for _, _, data in sse(s):
            if data == "[DONE]":
                break
            for choice in json.loads(data).get("choices", []):
                stamps.feed((choice.get("delta") or {}).get("content") or "")
    walls.append(time.perf_counter() - t0)
    lats.extend(stamps.latencies)


def parallel(fn, items, workers=8):
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        return list(ex.map(fn, items))


class Replica:
    def __init__(self, args, ctx, name, database):
        self.data = os.path.join(ctx["root"], name)
        self.log = os.path.join(ctx["root"], "logs", name + ".log")
        cmd = [args.tavo] + (["--database", database] if database else []) + \
              ["--data-dir", ctx["sqlite_data"] if database is None else self.data,
               "serve", "--accounts", "--addr", "127.0.0.1:0"]
        t0 = time.perf_counter()
        self.proc, self.url = start(cmd, self.log)
        self.ready_s = time.perf_counter() - t0
        self.pid = self.proc.pid
        self.name = name


def run_mode(mode, args, ctx):
    """One mode's replicas, logins, warm-up and phase; answers its result object."""
    n = 1 if mode == "sqlite" else int(mode[2:])
    database = None if mode == "sqlite" else ctx["pg_url"]
    chats = ctx["sqlite_chats"] if mode == "sqlite" else ctx["pg_chats"]
    replicas = [Replica(args, ctx, f"{mode}-r{k}", database) for k in range(n)]
    ctx["live"] = list(replicas)
    print(f"{mode}: {n} replica(s) up ({', '.join(f'{r.url} in {r.ready_s:.2f} s' for r in replicas)})", flush=True)
    urls = [r.url for r in replicas]

    t0 = time.perf_counter()
    cookies = parallel(lambda i: Api(urls[i % n]).login(user_name(i), password(i)), range(args.users))
    login_s = time.perf_counter() - t0
    users = [{"i": i, "chat": chats[i], "cookie": c, "apis": [Api(u, c) for u in urls]}
             for i, c in enumerate(cookies)]
    print(f"{mode}: {args.users} logins (round-robin over {n}) in {login_s:.1f} s "
          f"({args.users / login_s:.0f}/s)", flush=True)

    t0 = time.perf_counter()
    for k in range(n):
        u = users[k % len(users)]
        reply_once(u["apis"][k], u["apis"][k], u["chat"], None)
    parallel(lambda uk: uk[0]["apis"][uk[1]].call("GET", f"/api/chats/{uk[0]['chat']}/messages?limit=50"),
             [(u, k) for u in users for k in range(n)])
    print(f"{mode}: warm-up (a reply per replica, every library opened on every replica) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    idle_rss = [rss_kb(r.pid) for r in replicas]

    nrep = min(args.replies, len(users))
    jobs = [(u["apis"][j % n], u["apis"][(j + 1) % n], u["chat"]) for j, u in enumerate(users[:nrep])]
    targets = [(u["apis"], u["chat"]) for u in (users[nrep:] or users)]
    tally, stop_ = Tally(), threading.Event()
    readers = [threading.Thread(target=reader, args=(targets, stop_, tally, s), daemon=True)
               for s in range(args.readers)]
    for t in readers:
        t.start()
    time.sleep(0.3)

    pids = [r.pid for r in replicas]
    cpu0 = [cpu_secs(p) for p in pids]
    postmaster = ctx.get("postmaster")
    pg0, mock0 = postgres_cpu(postmaster), cpu_secs(ctx["mock"].pid)
    self0, mach0 = cpu_secs("self"), machine_jiffies()
    sampler = RssSampler(pids)
    print(f"{mode}: phase: {nrep} repliers for {args.read_secs} s, {args.readers} readers", flush=True)
    t0 = time.perf_counter()
    deadline = t0 + args.read_secs
    threads = [threading.Thread(target=replier, args=(job, deadline, tally), daemon=True) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = time.perf_counter()
    span = t1 - t0
    peaks = sampler.stop()
    cpu = [cpu_secs(p) - c for p, c in zip(pids, cpu0)]
    pg_cpu, mock_cpu = postgres_cpu(postmaster) - pg0, cpu_secs(ctx["mock"].pid) - mock0
    self_cpu, mach1 = cpu_secs("self") - self0, machine_jiffies()
    busy_cores = (mach1[0] - mach0[0]) / CLK / span

    # The baseline: the same number of streams straight from the mock, readers still reading.
    dwalls, dlats = [], []
    dthreads = [threading.Thread(target=direct, args=(ctx["mock_url"], dwalls, dlats), daemon=True)
                for _ in range(nrep)]
    for t in dthreads:
        t.start()
    for t in dthreads:
        t.join()
    stop_.set()
    for t in readers:
        t.join()

    reads = [d for end, d in tally.reads if t0 <= end <= t1]
    answered = tally.posts + tally.streams + len(reads)
    ms = lambda s: r1(s * 1000, 1)  # noqa: E731
    nsms = lambda ns: r1(ns / 1e6, 2)  # noqa: E731
    result = {
        "mode": mode, "replicas": n, "database": "sqlite" if database is None else "postgresql",
        "scale": {"users": args.users, "cards": args.cards, "messages": args.messages, "replies": nrep,
                  "readers": args.readers, "events": args.events, "intervalMs": args.interval_ms,
                  "readSecs": args.read_secs, "cores": os.cpu_count()},
        "loginsPerSec": r1(args.users / login_s), "phaseSecs": r1(span, 2),
        "requestsPerSec": r1(answered / span), "requests": answered,
        "replies": {"count": tally.replies, "perSec": r1(tally.replies / span, 1),
                    "wallP50Ms": ms(pct(tally.walls, 50)), "wallP99Ms": ms(pct(tally.walls, 99))},
        "latestPage": {"count": len(reads), "perSec": r1(len(reads) / span),
                       "p50Ms": ms(pct(reads, 50)), "p99Ms": ms(pct(reads, 99))},
        "relay": {"deltas": len(tally.lats), "expected": tally.replies * args.events,
                  "p50Ms": nsms(pct(tally.lats, 50)), "p99Ms": nsms(pct(tally.lats, 99)),
                  "directP50Ms": nsms(pct(dlats, 50)), "directP99Ms": nsms(pct(dlats, 99)),
                  "overheadP50Ms": nsms(pct(tally.lats, 50) - pct(dlats, 50)),
                  "overheadP99Ms": nsms(pct(tally.lats, 99) - pct(dlats, 99)),
                  "directWallP50Ms": ms(pct(dwalls, 50))},
        "perReplica": [{"url": r.url, "rssAfterWarmUpMb": r1(idle / 1024), "rssPeakMb": r1(peaks[r.pid] / 1024),
                        "cpuSecs": r1(c, 2), "cores": r1(c / span, 2)}
                       for r, idle, c in zip(replicas, idle_rss, cpu)],
        "databaseCpuSecs": None if database is None else r1(pg_cpu, 2),
        "databaseCores": None if database is None else r1(pg_cpu / span, 2),
        "databaseCpuOf": None if database is None else
        (f"postmaster {postmaster} and its children" if postmaster else "every postgres process here"),
        "mockCpuSecs": r1(mock_cpu, 2), "clientCpuSecs": r1(self_cpu, 2),
        "machineBusyCores": r1(busy_cores, 2),
        "errors": len(tally.errors), "firstErrors": tally.errors[:5],
    }
    print(f"{mode}: {answered / span:.0f} requests/s over {span:.1f} s; {tally.replies} replies "
          f"(wall p50 {ms(pct(tally.walls, 50))} / p99 {ms(pct(tally.walls, 99))} ms); {len(reads) / span:.0f} "
          f"page reads/s (p50 {ms(pct(reads, 50))} / p99 {ms(pct(reads, 99))} ms); relay p50 "
          f"{nsms(pct(tally.lats, 50))} / p99 {nsms(pct(tally.lats, 99))} ms (direct p99 "
          f"{nsms(pct(dlats, 99))}); {len(tally.errors)} errors", flush=True)
    for e in tally.errors[:5]:
        print(f"{mode}: error: {e}", flush=True)

    if mode == "pg2" and args.failover_runs > 0:
        result["failover"] = failover(args, ctx, replicas, users)
    for r in ctx["live"]:
        stop(r.proc)
    ctx["live"] = []
    return result


# --- failover --------------------------------------------------------------------------------

def failover(args, ctx, replicas, users):
    """FAILOVER_RUNS kills of replica A mid-reply; answers one object per run."""
    runs = []
    for k in range(args.failover_runs):
        a, b = replicas[0], replicas[1]
        u = users[-(k + 1) % len(users)]
        api_a, api_b = Api(a.url, u["cookie"]), Api(b.url, u["cookie"])
        try:
            api_b.request("POST", "/api/connections",
                          {"name": "long", "source": "custom", "protocol": "openai-chat",
                           "baseUrl": ctx["long_url"] + "/v1", "model": "mock-model"}, expect=(200, 201, 409))
        except HttpError as e:
            raise SystemExit(f"failover: adding the long connection: {e}")
        body = {"type": "normal", "message": "long", "connection": "long"}
        started = api_a.request("POST", f"/api/chats/{u['chat']}/replies", body, expect=(202,))[2]
        rid = started["replyId"]
        if not re.fullmatch(r"rpl_[0-9a-f]+", rid):
            raise SystemExit(f"failover: unexpected reply id {rid!r}")
        seen, end = [], {}

        def on(eid, event, data):
            seen.append(eid)
            if event == "finished":
                end["status"] = json.loads(data).get("status")
                end["at"] = time.perf_counter()
                return False
            return True

        follower = threading.Thread(target=lambda: _safe(lambda: api_b.follow(rid, on, timeout=60), end),
                                    daemon=True)
        follower.start()
        time.sleep(args.failover_after)
        os.kill(a.pid, signal.SIGKILL)
        killed = time.perf_counter()
        a.proc.wait()
        free_s, status = None, None
        while time.perf_counter() - killed < 60:
            try:
                status = api_b.call("GET", f"/api/replies/{rid}").get("status")
            except Exception as e:  # noqa: BLE001
                status = f"error {e}"
            if status == "cancelled":
                free_s = time.perf_counter() - killed
                break
            time.sleep(0.05)
        # The chat is free: a new reply there starts on B.
        first_code, accepted_s, next_status = None, None, None
        while time.perf_counter() - killed < 60:
            try:
                nxt = api_b.request("POST", f"/api/chats/{u['chat']}/replies",
                                    {"type": "normal", "message": "after the failover"}, expect=(202,))[2]
                first_code = first_code or 202
                accepted_s = time.perf_counter() - killed
                fin = {}

                def until_finished(_id, event, data):
                    if event == "finished":
                        fin.update(json.loads(data))
                        return False
                    return True

                api_b.follow(nxt["replyId"], until_finished)
                next_status = fin.get("status")
                break
            except HttpError as e:
                first_code = first_code or e.status
                if e.status != 409:
                    next_status = str(e)
                    break
                time.sleep(0.05)
        follower.join(60)
        delivered = {i for i in seen if i is not None}
        replayed = []
        try:
            api_b.follow(rid, lambda i, ev, d: replayed.append(i), last_event_id=0, timeout=30)
        except Exception as e:  # noqa: BLE001
            end.setdefault("replayError", str(e))
        stored = {int(x) for x in psql(ctx["pg_url"],
                  f"SELECT seq FROM tavo_cluster.reply_events WHERE reply_id = '{rid}' ORDER BY seq").split()}
        missing = stored - delivered - {i for i in replayed if i is not None}
        run = {"run": k + 1, "replyId": rid, "killedAfterSecs": args.failover_after,
               "chatFreeSecs": r1(free_s, 3), "lastStatusSeen": status,
               "newReplyFirstCode": first_code, "newReplyAcceptedSecs": r1(accepted_s, 3),
               "newReplyStatus": next_status,
               "followerEndedSecs": r1(end["at"] - killed, 3) if "at" in end else None,
               "followerFinalStatus": end.get("status"), "followerError": end.get("error"),
               "storedEvents": len(stored), "delivered": len(delivered),
               "replayFrames": len(replayed), "missing": len(missing), "missingSeqs": sorted(missing)[:20],
               "deliveredNotStored": len(delivered - stored)}
        print(f"failover {k + 1}: chat free on B {run['chatFreeSecs']} s after kill -9 "
              f"(new reply: {first_code}, 202 after {run['newReplyAcceptedSecs']} s, ended {next_status}); "
              f"events stored {len(stored)}, delivered {len(delivered)}, missing {len(missing)}", flush=True)
        runs.append(run)
        # A new replica (a new empty folder) takes A's place for the next run.
        replicas[0] = Replica(args, ctx, f"{replicas[1].name}-a{k + 1}", ctx["pg_url"])
        ctx["live"].append(replicas[0])
    return runs


def _safe(fn, end):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        end["error"] = f"{type(e).__name__}: {e}"


def failover_alone(args, ctx):
    """The mode `failover`: two new replicas, the users it needs logged in."""
    replicas = [Replica(args, ctx, f"failover-r{k}", ctx["pg_url"]) for k in range(2)]
    ctx["live"] = list(replicas)
    picked = [(args.users - 1 - k) % args.users for k in range(args.failover_runs)]
    users = [{"i": i, "chat": ctx["pg_chats"][i], "cookie": Api(replicas[1].url).login(user_name(i), password(i))}
             for i in reversed(picked)]
    try:
        return {"mode": "failover", "replicas": 2, "failover": failover(args, ctx, replicas, users)}
    finally:
        for r in ctx["live"]:
            stop(r.proc)
        ctx["live"] = []


# --- the table -------------------------------------------------------------------------------

def table(results):
    for r in results:
        for f in r.get("failover", []):
            print(f"{r['mode']} failover {f['run']}: chat free {f['chatFreeSecs']} s after kill -9, new reply "
                  f"{f['newReplyFirstCode']} ({f['newReplyStatus']}); events stored {f['storedEvents']}, "
                  f"delivered {f['delivered']}, missing {f['missing']}")
    loads = [r for r in results if "requestsPerSec" in r]
    if not loads:
        return
    rows = [
        ("replicas", lambda r: r["replicas"]),
        ("requests/s", lambda r: r["requestsPerSec"]),
        ("replies done", lambda r: r["replies"]["count"]),
        ("reply wall p50 / p99 ms", lambda r: f"{r['replies']['wallP50Ms']} / {r['replies']['wallP99Ms']}"),
        ("latest page reads/s", lambda r: r["latestPage"]["perSec"]),
        ("latest page p50 / p99 ms", lambda r: f"{r['latestPage']['p50Ms']} / {r['latestPage']['p99Ms']}"),
        ("relay p50 / p99 ms", lambda r: f"{r['relay']['p50Ms']} / {r['relay']['p99Ms']}"),
        ("direct p50 / p99 ms", lambda r: f"{r['relay']['directP50Ms']} / {r['relay']['directP99Ms']}"),
        ("relay overhead p99 ms", lambda r: r["relay"]["overheadP99Ms"]),
        ("deltas / expected", lambda r: f"{r['relay']['deltas']} / {r['relay']['expected']}"),
        ("RSS peak MB per replica", lambda r: " ".join(str(x["rssPeakMb"]) for x in r["perReplica"])),
        ("CPU cores per replica", lambda r: " ".join(str(x["cores"]) for x in r["perReplica"])),
        ("database CPU s (cores)", lambda r: "-" if r["databaseCpuSecs"] is None
         else f"{r['databaseCpuSecs']} ({r['databaseCores']})"),
        ("mock / client CPU s", lambda r: f"{r['mockCpuSecs']} / {r['clientCpuSecs']}"),
        ("machine busy cores", lambda r: f"{r['machineBusyCores']} of {r['scale']['cores']}"),
        ("logins/s", lambda r: r["loginsPerSec"]),
        ("errors", lambda r: r["errors"]),
    ]
    width = max(len(name) for name, _ in rows)
    cols = [max(len(r["mode"]), *(len(str(f(r))) for _, f in rows)) for r in loads]
    print()
    print(" " * width + " | " + " | ".join(r["mode"].rjust(c) for r, c in zip(loads, cols)))
    print("-" * width + "-+-" + "-+-".join("-" * c for c in cols))
    for name, f in rows:
        print(name.ljust(width) + " | " + " | ".join(str(f(r)).rjust(c) for r, c in zip(loads, cols)))
    for r in loads:
        busy, cores = r["machineBusyCores"] or 0, r["scale"]["cores"] or 1
        where = (f"the {cores} cores are the floor (machine busy {busy} of {cores}; database "
                 f"{r['databaseCores'] if r['databaseCores'] is not None else '-'} cores, replicas "
                 f"{round(sum(x['cores'] or 0 for x in r['perReplica']), 2)}, client "
                 f"{round((r['clientCpuSecs'] or 0) / r['phaseSecs'], 2)}, mock "
                 f"{round((r['mockCpuSecs'] or 0) / r['phaseSecs'], 2)})"
                 if busy >= 0.9 * cores else f"not CPU-bound (machine busy {busy} of {cores} cores)")
        print(f"{r['mode']}: {where}")


# --- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tavo", default="target/release/tavo")
    ap.add_argument("--mock", default="target/release/mock-provider")
    ap.add_argument("--database", help="postgres://… of a server to create the bench database on "
                    "(default: a throwaway server from scripts/throwaway-postgres.sh)")
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--cards", type=int, default=5)
    ap.add_argument("--messages", type=int, default=1000, help="messages of each user's chat")
    ap.add_argument("--replies", type=int, default=200, help="concurrent streaming replies")
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--events", type=int, default=40, help="stamped deltas per reply")
    ap.add_argument("--interval-ms", type=int, default=25)
    ap.add_argument("--read-secs", type=float, default=10.0,
                    help="the phase's length: repliers start new replies until then (0: one burst)")
    ap.add_argument("--modes", default="sqlite,pg1,pg2,pg3",
                    help="comma-separated: sqlite, pg1, pg2, pg3 (any pgN), failover")
    ap.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2), help="users set up at a time")
    ap.add_argument("--failover-runs", type=int, default=3, help="after pg2's phase (0: none)")
    ap.add_argument("--failover-events", type=int, default=400)
    ap.add_argument("--failover-after", type=float, default=1.0, help="seconds from the POST to kill -9")
    ap.add_argument("--keep", action="store_true", help="keep the work folder and the bench database")
    args = ap.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in modes:
        if m not in ("sqlite", "failover") and not re.fullmatch(r"pg[1-9]", m):
            raise SystemExit(f"unknown mode {m!r}")
    if "failover" in modes and args.failover_runs < 1:
        raise SystemExit("the mode failover needs --failover-runs 1 or more")
    args.tavo, args.mock = os.path.abspath(args.tavo), os.path.abspath(args.mock)
    for b in (args.tavo, args.mock):
        if not os.access(b, os.X_OK):
            raise SystemExit(f"{b}: not built (cargo build --release -p tavo -p tavo-testkit --bins)")

    root = tempfile.mkdtemp(prefix="tavo-bench-replicas-")
    os.makedirs(os.path.join(root, "logs"))
    ctx = {"root": root, "live": []}
    procs, pg_dir, bench_db, admin_url = [], None, None, None
    print(f"scale: {args.users} users × {max(1, args.cards)} cards + a {args.messages}-message chat each; "
          f"{args.replies} streaming replies ({args.events} deltas every {args.interval_ms} ms) for "
          f"{args.read_secs} s; {args.readers} readers; modes {','.join(modes)}; {os.cpu_count()} cores; "
          f"work folder {root}", flush=True)
    results = []
    try:
        for name, events in (("mock", args.events), ("long", args.failover_events)):
            script = os.path.join(root, f"{name}-script.json")
            with open(script, "w") as f:
                json.dump({"turns": [{"text": "word " * events, "chunk": 5, "delayMs": args.interval_ms,
                                      "stamp": True}], "repeatLast": True}, f)
            p, url = start([args.mock, "--port", "0", "--script", script, "--log", os.devnull],
                           os.path.join(root, "logs", f"{name}.log"))
            procs.append(p)
            ctx[name] = p
            ctx[name + "_url"] = url
        files = write_files(root, args)

        if "sqlite" in modes:
            ctx["sqlite_data"] = os.path.join(root, "sqlite")
            ctx["sqlite_chats"], _ = setup("sqlite", args, files, None, ctx["sqlite_data"], ctx["mock_url"])
        if any(m != "sqlite" for m in modes):
            server = args.database
            if not server:
                server, pg_dir = throwaway_start()
                print(f"throwaway PostgreSQL: {server} ({pg_dir})", flush=True)
            admin_url = with_database(server, "postgres")
            bench_db = f"tavo_bench_{int(time.time())}_{os.getpid()}"
            psql(admin_url, f"CREATE DATABASE {bench_db}")
            ctx["pg_url"] = with_database(server, bench_db)
            ctx["postmaster"] = find_postmaster(admin_url)
            print(f"database {bench_db}; its CPU is read from "
                  f"{'postmaster %d and its children' % ctx['postmaster'] if ctx['postmaster'] else 'every postgres process on this machine'}",
                  flush=True)
            ctx["pg_chats"], _ = setup("postgresql", args, files, ctx["pg_url"],
                                       os.path.join(root, "pg-setup"), ctx["mock_url"])
        for m in modes:
            r = failover_alone(args, ctx) if m == "failover" else run_mode(m, args, ctx)
            print("RESULT " + json.dumps(r), flush=True)
            results.append(r)
        table(results)
    finally:
        for r in ctx.get("live", []):
            stop(r.proc)
        for p in procs:
            p.kill()
        if bench_db and not args.keep and not pg_dir:
            try:
                psql(admin_url, f"DROP DATABASE IF EXISTS {bench_db} WITH (FORCE)")
            except RuntimeError as e:
                print(f"could not drop {bench_db}: {e}", file=sys.stderr)
        if pg_dir and not args.keep:
            throwaway_stop(pg_dir)
        elif pg_dir:
            print(f"kept the throwaway server: scripts/throwaway-postgres.sh stop {pg_dir}", file=sys.stderr)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}" + (f" and database {bench_db}" if bench_db else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
