#!/usr/bin/env python3
"""tools/bench/ttfb.py - start to the first request byte of `skillbox run`.

A listener on 127.0.0.1 notes CLOCK_MONOTONIC when the first byte of a
connection arrives, then closes it (the run then fails: only its start is
timed); the run is started by tools/bench/spawn.c (built by make bench),
whose report has the same clock read just before fork. The configuration
is the bench's: the bundled skills, skill_mode inline, base_url at the
listener over plain HTTP, or with --tls at a TLS port (the ClientHello is
the first byte; a CA file is read as with a real server).

usage: ttfb.py [--tls] [-n N] BIN SPAWN
Prints the median and the range in ms.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CA = os.path.join(TOP, "tests", "data", "tls", "ca.pem")


def listener():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    firsts = []

    def serve():
        while True:
            c, _ = ls.accept()
            c.recv(1)
            firsts.append(time.monotonic_ns())
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1], firsts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("-n", type=int, default=21)
    ap.add_argument("bin")
    ap.add_argument("spawn")
    a = ap.parse_args()
    port, firsts = listener()
    w = tempfile.mkdtemp(prefix="skillbox-ttfb.")
    conf = os.path.join(w, "c.yaml")
    ca = ""
    if a.tls:
        ca = os.path.join(w, "ca.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                        "-keyout", os.path.join(w, "k.pem"), "-out", ca,
                        "-subj", "/CN=localhost"], check=True,
                       capture_output=True)
        ca = f"ca_file: {ca}\n"
    with open(conf, "w") as f:
        f.write(f"provider: openai\nmodel: m\n"
                f"base_url: {'https' if a.tls else 'http'}://localhost:{port}\n"
                f"api_key_env: OPENAI_API_KEY\n{ca}"
                f"skills: [{os.path.join(TOP, 'skills')}]\nskill_mode: inline\n"
                f"state_dir: {os.path.join(w, 'state')}\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": w, "OPENAI_API_KEY": "sk-ttfb"}
    rep = os.path.join(w, "rep")
    ms = []
    for i in range(a.n + 1):	# the first warms the page cache
        before = len(firsts)
        subprocess.run([a.spawn, "-o", rep, "--", a.bin, "-c", conf, "run",
                        "--no-log", "bench: what is using my disk"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(rep) as f:
            t0 = int(f.read().split()[0])
        for _ in range(100):
            if len(firsts) > before:
                break
            time.sleep(0.01)
        else:
            raise SystemExit("ttfb: no connection came")
        if i > 0:
            ms.append((firsts[before] - t0) / 1e6)
    shutil.rmtree(w, ignore_errors=True)
    ms.sort()
    print(f"{'TLS' if a.tls else 'HTTP'}: median {statistics.median(ms):.3f} ms "
          f"[{ms[0]:.3f}-{ms[-1]:.3f}], n={len(ms)}")


if __name__ == "__main__":
    main()
