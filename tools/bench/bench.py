#!/usr/bin/env python3
"""tools/bench/bench.py - the measuring half of `make bench`.

Runs skillbox and the peer (an agent on @openai/agents, tools/bench/peer)
against the same mock LLM (aimock behind stunnel, started by tools/bench/run)
and writes the figures as Markdown (report.md), raw samples (results.json)
and gnuplot data (*.dat) into the output folder. Progress goes to stderr.

usage: bench.py --bin BIN --peer DIR --mock-env FILE --work DIR --out DIR
                [--top DIR] [--quick | --short]
"""
import argparse
import json
import os
import platform
import re
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import threading
import time

PROMPT = "bench: what is using my disk"
ANSWER = "Bench answer: the sysinfo overview ran and the disk is fine."
MODEL = "bench-model"
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


class BenchError(Exception):
    pass


def say(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


# --- processes ------------------------------------------------------------

def tree(pid):
    """pid and its descendants, from /proc/PID/task/TID/children."""
    out, i = [pid], 0
    while i < len(out):
        p = out[i]
        i += 1
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    out.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return out


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise BenchError(f"no {key} in /proc/{pid}/status")


def killgroup(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


LIVE = set()	# process groups to kill if we are interrupted


SPAWN = None	# tools/bench/spawn.c, built by tools/bench/run


def run(cmd, env, work, timeout=120, sample=False, cwd=None, stdin_data=None):
    """One process (its own session), started by the launcher: wall time,
    rusage of the tree (wait4 counts the reaped descendants). With
    sample=True also the VmHWM of the process at its exit (ptrace) and the
    peak of the summed VmRSS of its tree, read every ~1 ms."""
    out_f = os.path.join(work, "run.out")
    err_f = os.path.join(work, "run.err")
    in_f = os.path.join(work, "run.in")
    rep_f = os.path.join(work, "run.rep")
    with open(in_f, "w") as f:
        f.write(stdin_data or "")
    if os.path.exists(rep_f):
        os.unlink(rep_f)
    argv = [SPAWN] + (["-t"] if sample else []) + ["-o", rep_f, "--"] + cmd
    with open(in_f) as fi, open(out_f, "w") as fo, open(err_f, "w") as fe:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=fi, stdout=fo,
                             stderr=fe, start_new_session=True)
    LIVE.add(p.pid)
    expired = []
    timer = threading.Timer(timeout, lambda: (expired.append(1), killgroup(p.pid)))
    timer.start()
    peak_sum = 0
    try:
        if sample:
            while p.poll() is None:
                s = sum(rss_kb(q) for q in tree(p.pid)[1:])
                peak_sum = max(peak_sum, s)
                time.sleep(0.001)
        else:
            p.wait()
    finally:
        timer.cancel()
        killgroup(p.pid)	# whatever it left behind
        LIVE.discard(p.pid)
    with open(out_f) as f:
        out = f.read()
    with open(err_f) as f:
        err = f.read()
    if expired:
        raise BenchError(f"timed out after {timeout} s: {' '.join(cmd)}")
    try:
        with open(rep_f) as f:
            t0, t1, _, rc, ut, st, maxrss, hwm = (int(x) for x in f.read().split())
    except (OSError, ValueError) as e:
        raise BenchError(f"the launcher left no report ({e}): {' '.join(cmd)}\n"
                         f"{err[-1000:]}") from None
    return {
        "t0": t0, "wall_ms": (t1 - t0) / 1e6, "cpu_ms": (ut + st) / 1000,
        "maxrss_kb": maxrss, "hwm_kb": hwm, "tree_rss_kb": peak_sum,
        "rc": rc, "out": out, "err": err,
    }


def check_answer(name, r, cmd):
    if r["rc"] != 0 or r["out"].strip() != ANSWER:
        raise BenchError(
            f"{name}: wrong result (exit {r['rc']}), expected {ANSWER!r}\n"
            f"command: {' '.join(cmd)}\nstdout: {r['out'][-2000:]}\n"
            f"stderr: {r['err'][-2000:]}")


# --- loopback forwarder: when does the first request byte arrive? -------

class Forwarder:
    """127.0.0.1:port -> upstream; notes the monotonic time of the first
    byte each accepted connection sends (the TLS ClientHello)."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.firsts = []
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        sel = selectors.DefaultSelector()
        sel.register(self.ls, selectors.EVENT_READ, None)
        while True:
            for key, _ in sel.select():
                if key.data is None:
                    c, _ = self.ls.accept()
                    sel.register(c, selectors.EVENT_READ, "new")
                    continue
                c = key.fileobj
                sel.unregister(c)
                try:
                    data = c.recv(65536)
                except OSError:
                    data = b""
                self.firsts.append(time.monotonic_ns())
                if not data:
                    c.close()
                    continue
                threading.Thread(target=self.relay, args=(c, data),
                                 daemon=True).start()

    def relay(self, c, first):
        try:
            u = socket.create_connection(("127.0.0.1", self.upstream), 10)
            u.settimeout(None)
            u.sendall(first)
        except OSError:
            c.close()
            return

        def pump(a, b):
            try:
                while True:
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        t = threading.Thread(target=pump, args=(u, c), daemon=True)
        t.start()
        pump(c, u)
        t.join(60)
        c.close()
        u.close()

    def first_after(self, t0):
        later = [t for t in self.firsts if t >= t0]
        return (min(later) - t0) / 1e6 if later else None


# --- the two systems --------------------------------------------------------

class Systems:
    def __init__(self, a):
        self.a = a
        self.bin = os.path.abspath(a.bin)
        self.node = subprocess.run(["sh", "-c", "command -v node"],
                                   capture_output=True, text=True).stdout.strip()
        if not self.node:
            raise BenchError("node is not installed (tools/setup)")
        self.node = os.path.realpath(self.node)
        self.agent = os.path.join(a.peer, "agent.mjs")
        env = {}
        with open(a.mock_env) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k:
                    env[k] = v
        self.mock = env
        self.https = env["MOCK_HTTPS"]
        self.skills = os.path.join(a.top, "skills")
        home = os.path.join(a.work, "home")
        os.makedirs(home, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": home, "LANG": "C.UTF-8",
                    "OPENAI_API_KEY": "sk-bench"}
        port = int(self.https.rsplit(":", 1)[1])
        self.fwd = Forwarder(port)
        self.fwd_url = f"https://localhost:{self.fwd.port}"
        self.conf = self.write_conf("skillbox.yaml", self.https)
        self.conf_fwd = self.write_conf("skillbox-fwd.yaml", self.fwd_url)

    def write_conf(self, name, url):
        path = os.path.join(self.a.work, name)
        with open(path, "w") as f:
            f.write(f"""# written by tools/bench/bench.py
provider: openai
model: {MODEL}
base_url: {url}
api_key_env: OPENAI_API_KEY
ca_file: {self.mock['MOCK_CA']}
skills: [{self.skills}]
skill_mode: inline
state_dir: {os.path.join(self.a.work, 'state')}
""")
        return path

    def sb_turn(self, fwd=False):
        return ([self.bin, "-c", self.conf_fwd if fwd else self.conf, "run",
                 "--no-log", PROMPT], self.env)

    def peer_env(self, fwd=False):
        e = dict(self.env)
        e.update({"BENCH_BASE_URL": self.fwd_url if fwd else self.https,
                  "BENCH_MODEL": MODEL, "BENCH_SKILLS": self.skills,
                  "NODE_EXTRA_CA_CERTS": self.mock["MOCK_CA"]})
        return e

    def peer_turn(self, fwd=False):
        return ([self.node, self.agent, PROMPT], self.peer_env(fwd))

    def sb_chat(self):
        return ([self.bin, "--stats", "-c", self.conf, "chat", "--session",
                 "growth"], self.env)

    def peer_repl(self):
        return ([self.node, self.agent, "--repl"], self.peer_env())


# --- measurements -----------------------------------------------------------

def pairs(S, n, what, fwd=False, sample=False, script=False):
    """n pairs of one-turn runs, skillbox then peer, after one warm-up each;
    with script=True each pair is followed by the skill script alone."""
    res = {"skillbox": [], "peer": [], "script": []}
    sdir = os.path.join(S.skills, "sysinfo")
    for i in range(n + 1):
        for name, mk in (("skillbox", S.sb_turn), ("peer", S.peer_turn)):
            cmd, env = mk(fwd)
            r = run(cmd, env, S.a.work, timeout=60, sample=sample)
            check_answer(name, r, cmd)
            if fwd:
                r["first_ms"] = S.fwd.first_after(r["t0"])
                if r["first_ms"] is None:
                    raise BenchError(f"{name}: no connection reached the forwarder")
            if i > 0:
                res[name].append(r)
        if script:
            r = run(["sh", "scripts/overview.sh"], S.env, S.a.work, cwd=sdir,
                    stdin_data="{}")
            if r["rc"] != 0 or '"uptime_s"' not in r["out"]:
                raise BenchError(f"overview.sh alone failed: {r['err'][-500:]}")
            if i > 0:
                res["script"].append(r)
        say(f"{what}: pair {i}/{n}" if i else f"{what}: warm-up done")
    return res


def pair_stats(res, key):
    sb = [r[key] for r in res["skillbox"]]
    pe = [r[key] for r in res["peer"]]
    ratios = [p / s for s, p in zip(sb, pe) if s > 0]
    return {"skillbox": median(sb), "peer": median(pe),
            "ratio": median(ratios), "n": len(sb),
            "skillbox_all": sb, "peer_all": pe}


class LineProc:
    """A process fed one line at a time; answers read with a timeout."""

    def __init__(self, cmd, env, work, name):
        self.err = open(os.path.join(work, f"{name}.err"), "w")
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err,
                                  start_new_session=True)
        LIVE.add(self.p.pid)
        self.buf = b""
        self.name = name

    def ask(self, line, timeout=60):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        end = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise BenchError(f"{self.name}: no answer within {timeout} s")
            d = os.read(self.p.stdout.fileno(), 65536)
            if not d:
                raise BenchError(f"{self.name}: exited mid-conversation "
                                 f"(see {self.err.name})")
            self.buf += d
        sel.close()
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode(errors="replace")

    def close(self, timeout=30):
        try:
            self.p.stdin.close()
            self.p.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            pass
        killgroup(self.p.pid)
        LIVE.discard(self.p.pid)
        self.err.close()


def growth(S, name, cmd, env, turns, marks, out):
    """turns of PROMPT in one process; VmRSS/VmHWM when answers arrive."""
    lp = LineProc(cmd, env, S.a.work, f"growth-{name}")
    res = {"marks": {}, "turns": turns}
    t0 = time.monotonic()
    try:
        for i in range(1, turns + 1):
            ans = lp.ask(PROMPT)
            if ans.strip() != ANSWER:
                raise BenchError(f"{name}: turn {i} answered {ans!r}, "
                                 f"expected {ANSWER!r} (see {lp.err.name})")
            if i in marks:
                res["marks"][i] = {"rss_kb": status_kb(lp.p.pid, "VmRSS"),
                                   "hwm_kb": status_kb(lp.p.pid, "VmHWM")}
            if i % 100 == 0:
                say(f"growth {name}: {i}/{turns} turns")
        res["wall_s"] = time.monotonic() - t0
    except BaseException as e:	# noqa: BLE001 - handed to the main thread
        res["error"] = e
    finally:
        lp.close()
    with open(lp.err.name) as f:
        m = re.search(r"peak (\d+) bytes", f.read())
    res["budget_peak"] = int(m.group(1)) if m else None
    out[name] = res


def callgrind(S, turns):
    """Instructions of the skillbox process for `run` (one turn) and for a
    chat of `turns` turns; the difference per turn is the steady state."""
    def ir(cmd, stdin_data):
        r = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                + cmd, S.env, S.a.work, timeout=300, stdin_data=stdin_data)
        # Forked children that exit without execve print their own count
        # (which starts from the parent's): take the first process's.
        pid = re.search(r"^==(\d+)== Command:", r["err"], re.M)
        m = pid and re.findall(rf"^=={pid.group(1)}== Collected : (\d+)",
                               r["err"], re.M)
        if r["rc"] != 0 or not m:
            raise BenchError(f"callgrind failed (exit {r['rc']}):\n{r['err'][-2000:]}")
        answers = [ln for ln in r["out"].splitlines() if ln.strip()]
        if not answers or any(a.strip() != ANSWER for a in answers):
            raise BenchError(f"callgrind: wrong answers: {r['out'][-500:]}")
        return int(m[0]), len(answers)
    one, _ = ir(S.sb_turn()[0], "")
    chat1, _ = ir([S.bin, "-c", S.conf, "chat", "--session", "cg1"],
                  PROMPT + "\n")
    chatn, n = ir([S.bin, "-c", S.conf, "chat", "--session", "cgn"],
                  (PROMPT + "\n") * turns)
    if n != turns:
        raise BenchError(f"callgrind chat: {n} answers for {turns} turns")
    return {"run": one, "chat_first": chat1,
            "chat_per_turn": (chatn - chat1) / (turns - 1), "turns": turns}


def gen_skills(root, n):
    if os.path.isdir(root):
        return
    tmp = root + ".tmp"
    for i in range(n):
        d = os.path.join(tmp, f"skill-{i:05d}")
        os.makedirs(d)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: skill-{i:05d}\ndescription: Skill number "
                    f"{i} of the discovery benchmark.\n---\nBody.\n")
    os.rename(tmp, root)


def discovery(S, counts, reps):
    rows = []
    for n in counts:
        root = os.path.join(S.a.work, f"skills-{n}")
        gen_skills(root, n)
        walls, peak, hwm, budget = [], None, None, "2 MiB (default)"
        cmd = [S.bin, "--stats", "skills", "list", root]
        for _ in range(reps(n) + 1):	# the first run warms the caches
            r = run(cmd, S.env, S.a.work, timeout=120)
            if r["rc"] == 3 and len(cmd) == 5:	# the default budget is too small
                cmd[1:1] = ["--memory", "16M"]
                budget = "16 MiB (2 MiB is too small)"
                r = run(cmd, S.env, S.a.work, timeout=120)
            lines = r["out"].count("\n")
            if r["rc"] != 0 or lines < n:
                raise BenchError(f"skills list of {n} skills: exit {r['rc']}, "
                                 f"{lines} lines\n{r['err'][-1000:]}")
            m = re.search(r"peak (\d+) bytes.*VmHWM\) (\d+) KiB", r["err"])
            if not m:
                raise BenchError(f"no --stats line: {r['err'][-500:]}")
            peak, hwm = int(m.group(1)), int(m.group(2))
            walls.append(r["wall_ms"])
        rows.append({"skills": n, "wall_ms": median(walls[1:]), "budget": budget,
                     "peak_bytes": peak, "hwm_kb": hwm, "runs": len(walls) - 1})
        say(f"discovery: {n} skills: {rows[-1]['wall_ms']:.1f} ms")
    return rows


# --- report -----------------------------------------------------------------

def fmt(x, nd=0):
    if x is None or x != x:
        return "—"
    if isinstance(x, int) or nd == 0:
        return f"{round(x):,}"
    return f"{x:,.{nd}f}"


def ratio(p, s, nd=1):
    if s in (None, 0) or p is None or s != s or p != p:
        return "—"
    return f"{p / s:,.{nd}f}×"


def du_bytes(path):
    total = 0
    for dp, _, fs in os.walk(path):
        for f in fs:
            try:
                total += os.lstat(os.path.join(dp, f)).st_size
            except OSError:
                pass
    return total


def versions(S):
    def cmd(c):
        try:
            return subprocess.run(c, capture_output=True, text=True,
                                  timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    pk = os.path.join(S.a.peer, "node_modules", "@openai", "agents", "package.json")
    with open(pk) as f:
        agents = json.load(f)["version"]
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f
                       if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"skillbox": cmd([S.bin, "version"]), "node": cmd([S.node, "--version"]),
            "agents": agents, "kernel": platform.release(), "cpu": cpu,
            "cpus": os.cpu_count(), "user": cmd(["id", "-un"]),
            "load": os.getloadavg()[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--mock-env", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--spawn", required=True, help="tools/bench/spawn.c, built")
    ap.add_argument("--top", default=os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--sizes", help="file with tools/sizes.sh's table")
    ap.add_argument("--sandbox", help="file with the sandbox bench table")
    ap.add_argument("--quick", action="store_true",
                    help="few runs, 100 turns: to try the bench out")
    ap.add_argument("--short", action="store_true",
                    help="every step once, smallest counts (make bench-short)")
    a = ap.parse_args()
    global SPAWN
    SPAWN = os.path.abspath(a.spawn)
    N = 3 if a.quick else 21		# one-turn pairs for cold start, wall, CPU
    NS = 2 if a.quick else 7		# pairs sampled for the tree RSS
    TURNS = 100 if a.quick else 1000
    CG_TURNS = 11
    COUNTS = (10, 100, 1000, 10000)
    reps = lambda n: 5 if n >= 10000 else 11
    if a.short:
        N, NS, TURNS, CG_TURNS, COUNTS = 1, 1, 12, 3, (10, 100)
        reps = lambda n: 1
    MARKS = sorted({10, min(100, TURNS), TURNS})
    os.makedirs(a.out, exist_ok=True)

    S = Systems(a)
    R = {"n": N, "ns": NS, "turns": TURNS, "versions": versions(S)}

    say("sizes")
    R["size"] = {"bin": os.path.getsize(S.bin), "skills": du_bytes(S.skills),
                 "node_modules": du_bytes(os.path.join(a.peer, "node_modules")),
                 "node": os.path.getsize(S.node)}

    # Timing first, with nothing else running.
    R["cold"] = pair_stats(pairs(S, N, "cold start", fwd=True), "first_ms")
    turn = pairs(S, N, "one turn", script=True)
    R["wall"] = pair_stats(turn, "wall_ms")
    R["cpu"] = pair_stats(turn, "cpu_ms")
    R["maxrss"] = pair_stats(turn, "maxrss_kb")
    sampled = pairs(S, NS, "tree RSS", sample=True)
    R["hwm"] = pair_stats(sampled, "hwm_kb")
    R["treerss"] = pair_stats(sampled, "tree_rss_kb")
    R["script"] = {"wall_ms": median([r["wall_ms"] for r in turn["script"]]),
                   "cpu_ms": median([r["cpu_ms"] for r in turn["script"]]), "n": N}
    R["discovery"] = discovery(S, COUNTS, reps)

    # Memory growth: both conversations at once (timing is not reported
    # from them), with callgrind beside them.
    say(f"growth: {TURNS} turns each, skillbox and peer side by side; callgrind")
    g = {}
    th = [threading.Thread(target=growth, args=(S, n, *mk(), TURNS, MARKS, g),
                           daemon=True)
          for n, mk in (("skillbox", S.sb_chat), ("peer", S.peer_repl))]
    for t in th:
        t.start()
    R["callgrind"] = callgrind(S, CG_TURNS)
    say("callgrind: %s instructions for one run" % fmt(R["callgrind"]["run"]))
    for t in th:
        t.join(1800)
        if t.is_alive():
            raise BenchError("the growth test did not finish")
    for n in ("skillbox", "peer"):
        if "error" in g[n]:
            raise g[n]["error"]
    R["growth"] = g
    with open(os.path.join(a.work, "state", "sessions", "growth.jsonl")) as f:
        R["compactions"] = sum('"type":"compaction"' in ln for ln in f)

    R["sizes_table"] = open(a.sizes).read().strip() if a.sizes and os.path.exists(a.sizes) else ""
    R["sandbox_table"] = open(a.sandbox).read().strip() if a.sandbox and os.path.exists(a.sandbox) else ""
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(R, f, indent=1, default=str)
    report(R, a)


def report(R, a):
    v, sz = R["versions"], R["size"]
    g = R["growth"]
    T = R["turns"]
    gm = {n: g[n]["marks"] for n in g}
    grow = {n: gm[n][T]["rss_kb"] - gm[n][10]["rss_kb"] for n in gm}
    # After turn 100 skillbox has compacted its history twice: steady state.
    steady = {n: gm[n][T]["rss_kb"] - gm[n][min(100, T)]["rss_kb"] for n in gm}
    L = []
    w = L.append
    w("### skillbox and an @openai/agents agent, side by side\n")
    w(f"{v['skillbox']}; Node.js {v['node']} with @openai/agents {v['agents']}; "
      f"Linux {v['kernel']}, {v['cpus']} × {v['cpu']}, as {v['user']}, "
      f"load average {v['load']:.2f} at the start. "
      f"Medians of {R['n']} runs (tree RSS: {R['ns']}); "
      "the ratio is the median of the peer/skillbox ratios of runs made "
      "one right after the other.\n")
    w("| figure | skillbox | @openai/agents (Node.js) | peer / skillbox |")
    w("|---|---:|---:|---:|")
    w(f"| install: program (bytes) | {fmt(sz['bin'])} | {fmt(sz['node_modules'])} "
      f"(node_modules) | {ratio(sz['node_modules'], sz['bin'], 0)} |")
    w(f"| install: runtime (bytes) | — (static) | {fmt(sz['node'])} (node) | "
      f"{ratio(sz['node_modules'] + sz['node'], sz['bin'], 0)} (program + runtime) |")
    w(f"| install: bundled skills (bytes) | {fmt(sz['skills'])} | same folder | |")
    for key, label, nd in (("cold", "cold start to first request byte (ms)", 1),
                           ("wall", "wall time per turn (ms)", 1),
                           ("cpu", "CPU time per turn, user + sys, whole tree (ms)", 1),
                           ("hwm", "peak RSS of the main process, VmHWM at exit (KiB)", 0),
                           ("maxrss", "peak RSS of the largest process in the tree, ru_maxrss (KiB)", 0),
                           ("treerss", "peak RSS, sum over the process tree (KiB)", 0)):
        s = R[key]
        w(f"| {label} | {fmt(s['skillbox'], nd)} | {fmt(s['peer'], nd)} | "
          f"{s['ratio']:,.1f}× |")
    for m in sorted({10, min(100, T), T}):
        w(f"| RSS after {m:,} turns in one process (KiB) | "
          f"{fmt(gm['skillbox'][m]['rss_kb'])} | {fmt(gm['peer'][m]['rss_kb'])} | "
          f"{ratio(gm['peer'][m]['rss_kb'], gm['skillbox'][m]['rss_kb'])} |")
    w(f"| RSS growth, turn 10 to {T:,} (KiB) | {fmt(grow['skillbox'])} | "
      f"{fmt(grow['peer'])} | {ratio(grow['peer'], grow['skillbox'])} |")
    if T > 100:
        w(f"| RSS growth, turn 100 to {T:,} (KiB) | {fmt(steady['skillbox'])} | "
          f"{fmt(steady['peer'])} | {ratio(steady['peer'], steady['skillbox'])} |")
    w(f"| VmHWM after {T:,} turns (KiB) | {fmt(gm['skillbox'][T]['hwm_kb'])} | "
      f"{fmt(gm['peer'][T]['hwm_kb'])} | "
      f"{ratio(gm['peer'][T]['hwm_kb'], gm['skillbox'][T]['hwm_kb'])} |")
    sc = R["script"]
    if g["skillbox"].get("budget_peak"):
        w(f"| memory budget peak over the {T:,} turns (bytes) | "
          f"{fmt(g['skillbox']['budget_peak'])} | — | |")
    w(f"\nBoth turns include the same skill script: `sh overview.sh` alone "
      f"(run after each pair) takes {fmt(sc['wall_ms'], 1)} ms wall and "
      f"{fmt(sc['cpu_ms'], 1)} ms CPU (median of {sc['n']}). In the {T:,}-turn chat skillbox compacted "
      f"{R['compactions']} times.\n")

    cg = R["callgrind"]
    w("### skillbox alone\n")
    w("Instructions (valgrind --tool=callgrind, the skillbox process only):\n")
    w("| run | instructions |")
    w("|---|---:|")
    w(f"| `run`: one turn, start to exit | {fmt(cg['run'])} |")
    w(f"| `chat`: the first turn, start to exit | {fmt(cg['chat_first'])} |")
    w(f"| `chat`: each further turn (turns 2–{cg['turns']}) | "
      f"{fmt(cg['chat_per_turn'])} |")
    w("\nSkill discovery (`skillbox --stats skills list DIR`, generated "
      "skills, warm page cache):\n")
    w("| skills | wall (ms) | budget | budget peak (bytes) | VmHWM (KiB) |")
    w("|---:|---:|---|---:|---:|")
    for d in R["discovery"]:
        w(f"| {d['skills']:,} | {fmt(d['wall_ms'], 1)} | {d['budget']} | "
          f"{fmt(d['peak_bytes'])} | {fmt(d['hwm_kb'])} |")
    if R["sandbox_table"]:
        w("\nSandbox spawn overhead (`skillbox sandbox bench`, /bin/true, "
          "median µs):\n")
        w(R["sandbox_table"])
    if R["sizes_table"]:
        w("\nStripped size per architecture (`tools/sizes.sh`, bytes):\n")
        w(R["sizes_table"])
    method = METHOD.format(n=R["n"], ns=R["ns"], turns=f"{T:,}",
                           cg=cg["turns"], cg1=cg["turns"] - 1)
    w("\n" + textwrap.fill(" ".join(method.split()), width=76,
                           break_on_hyphens=False, break_long_words=False) + "\n")
    text = "\n".join(L) + "\n"
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text)

    # gnuplot data: absolute values (log scale) and discovery scaling
    rows = [("cold start (ms)", "cold start", R["cold"]),
            ("wall per turn (ms)", "wall", R["wall"]),
            ("CPU per turn (ms)", "CPU", R["cpu"]),
            ("main process VmHWM (MiB)", "VmHWM", R["hwm"]),
            ("tree RSS peak (MiB)", "tree RSS", R["treerss"]),
            ("install (MiB)", "install", None)]
    with open(os.path.join(a.out, "side.dat"), "w") as f:
        f.write("# figure skillbox peer ratio short-name\n")
        for name, short, st in rows:
            if st is None:
                sv, pv = sz["bin"] / 2**20, (sz["node_modules"] + sz["node"]) / 2**20
                rv = pv / sv
            else:
                div = 1024 if "MiB" in name else 1
                sv, pv, rv = st["skillbox"] / div, st["peer"] / div, st["ratio"]
            f.write(f'"{name}" {sv:.4f} {pv:.4f} {rv:.4f} "{short}"\n')
    with open(os.path.join(a.out, "discovery.dat"), "w") as f:
        f.write("# skills wall_ms hwm_kb\n")
        for d in R["discovery"]:
            f.write(f"{d['skills']} {d['wall_ms']:.3f} {d['hwm_kb']}\n")


METHOD = """
**Method.** `make bench` (tools/bench/run) starts the mock LLM
(`tools/mockllm`: @copilotkit/aimock behind stunnel on 127.0.0.1, a CA made
for the run) with `tools/bench/fixtures.json`: the prompt "bench: what is
using my disk" gets a tool call `run_skill_script {{"skill":"sysinfo",
"script":"scripts/overview.sh"}}`; the request whose tool result contains
`"exit":0` gets the final answer, checked word for word on every run of both
systems (the bench stops if one differs). Two model calls per turn, streamed
(SSE) for both, over TLS to `https://localhost`. skillbox runs the static
binary with a `skillbox.yaml` (provider openai, `skill_mode: inline`, the
repo's `skills/`, `ca_file` = the run's CA); its script runs in its sandbox
(the layers the kernel has, no uid drop as none is configured). The peer is
`tools/bench/peer/agent.mjs`: an @openai/agents `Agent` with one function
tool `run_skill_script` (zod schema) that runs the script with `sh` and
`{{}}` on stdin, no sandbox, an `OpenAIProvider` with `baseURL` at the mock
and `useResponses: false` (Chat Completions), tracing disabled,
`NODE_EXTRA_CA_CERTS` for the CA; installed by the bench with npm from the
exact versions in `tools/bench/peer/package.json`. One-turn runs are new
processes (`skillbox run --no-log PROMPT`, `node agent.mjs PROMPT`), one
warm-up each, then {n} pairs run one after the other, skillbox then peer;
each figure is the median, each ratio the median of the per-pair ratios.
After each timed pair the script runs alone (`sh scripts/overview.sh`, `{{}}`
on stdin), as the floor both turns share. Node.js is the machine's; the
`openai` package asks for Node.js 22 or later and npm warns on older ones,
but the peer runs and answers correctly on them.
*Install*: the stripped binary; the peer's `node_modules` (apparent bytes)
and the `node` binary it needs. Every measured process is started by
a small static launcher (`tools/bench/spawn.c`: fork, execve, `wait4`),
because Linux keeps the RSS high-water mark of the memory a process had
before `execve` in its `ru_maxrss`, and a process started from Python
would report Python's. *Cold start*: a forwarder of the bench's own sits
between client and stunnel and notes the monotonic time of the first byte
of the first connection (the TLS ClientHello), minus the launcher's time
just before `fork`. *Wall and CPU*: `fork` to `wait4`; CPU is user + sys
from `wait4`'s rusage, which includes every reaped descendant (the sandbox
child, `sh` and the tools the script runs). *Peak RSS*: the main
process's VmHWM, read from `/proc/PID/status` while it is stopped at its
exit (the launcher traces that process alone, `PTRACE_O_TRACEEXIT`); the
`ru_maxrss` of `wait4` (the largest single process of the tree, whichever
it is); and the peak of the sum
of VmRSS over the process tree (`/proc/PID/task/*/children`, read every
~1 ms; shared pages count once per process). The first and last come from
{ns} further pairs of runs, the middle one from the timed runs.
*Growth*: one process, {turns} turns fed one
line at a time, VmRSS and VmHWM read from `/proc/PID/status` when the
answer to turn 10, 100 and {turns} arrives; growth is RSS at {turns} minus
RSS at 10, and minus RSS at 100 (by then skillbox has compacted its history
twice, which touches its second half-space for the first time). skillbox runs `chat` (it keeps the history, compacts it after 40
items with a summary request, and writes its session log); the peer's REPL
runs each turn with no history (`runner.run(agent, line, {{stream: true}})`),
which asks less of it. The two conversations run at the same time, so no timing is taken
from them. *Instructions*: callgrind counts the skillbox process only, not
the forked sandbox child after `execve` nor the script; under valgrind
Landlock and rlimits are reported unavailable, so the sandbox does a little
less. The per-turn chat figure is (instructions of {cg} turns − of 1) / {cg1}.
*Discovery*: `skills list` over generated trees of one-line skills, median
of 11 runs (5 for 10,000) after one warm-up; peak and VmHWM from `--stats`.
*Sandbox*: `skillbox sandbox bench` times `/bin/true` in-process with
`CLOCK_MONOTONIC`.
"""


def cleanup(*_):
    """On a signal: end what we started and leave at once (the threads
    and the forwarder go with the process; tools/bench/run removes the
    work folder)."""
    for pid in list(LIVE):
        killgroup(pid)
    print("bench: interrupted", file=sys.stderr, flush=True)
    os._exit(130)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, cleanup)
    signal.signal(signal.SIGINT, cleanup)
    try:
        main()
    except BenchError as e:
        for pid in list(LIVE):
            killgroup(pid)
        print(f"bench: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        for pid in list(LIVE):
            killgroup(pid)
