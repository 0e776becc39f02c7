#!/usr/bin/env python3
"""A bounded load test of the course server (gpulab serve): N students submit within a window, and
every submission must be graded exactly once, nothing lost.

    scripts/bench-server.py [--students 200] [--window 600] [--labs hello,transpose] [--workers 1]
                            [--backend opencl] [--build build] [--dir DIR] [--json OUT.json]

It makes a roster of N students, starts `gpulab serve` on a free loopback port, and from as many
threads sends each student's submission (the reference solution of one of the labs, taken in turn)
at a random moment of the window. Then it waits until the queue is empty and reports the queue's
figures: how long submissions waited and were graded (median, 90th percentile, maximum), the time
from the first submission to the last grading, and any submission not graded exactly once.
Exit status 0 when every submission was graded once, 1 otherwise. Standard library only.
"""
import argparse
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import tomllib
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def lab_folder(name):
    for folder in sorted((REPO / "solutions").iterdir()):
        if folder.is_dir() and folder.name.split("-", 1)[-1] == name:
            return folder
    sys.exit(f"bench-server: no solution of lab {name} in {REPO / 'solutions'}")


def student_files(folder):
    """The lab's student files, as lab.toml's [files] lists them (every backend)."""
    with open(REPO / "labs" / folder.name / "lab.toml", "rb") as f:
        files = tomllib.load(f)["files"]
    names = {n for backend in files.values() for n in backend}
    return {n: (folder / n).read_bytes() for n in sorted(names) if (folder / n).is_file()}


def multipart(fields, files):
    boundary = uuid.uuid4().hex
    body = b""
    for key, value in fields.items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
    for name, content in files.items():
        body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n").encode() + content + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def request(url, token, data=None, content_type=None):
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}"})
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def percentiles(values):
    if not values:
        return {}
    values = sorted(values)
    return {"median_s": round(statistics.median(values), 2),
            "p90_s": round(values[int(0.9 * (len(values) - 1))], 2), "max_s": round(values[-1], 2)}


def start_server(args, folder):
    log = open(folder / "serve.log", "w")
    server = subprocess.Popen([str(Path(args.build) / "gpulab"), "serve", "--dir", str(folder / "server"), "--listen",
                               "127.0.0.1:0", "--backend", args.backend, "--workers", str(args.workers),
                               "--max-pending", "10"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(600):
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", (folder / "serve.log").read_text())
        if m:
            return server, m.group(1)
        time.sleep(0.1)
    sys.exit("bench-server: the server did not start: " + (folder / "serve.log").read_text())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--students", type=int, default=200)
    p.add_argument("--window", type=float, default=600)
    p.add_argument("--labs", default="hello,transpose")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--backend", default="opencl")
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--dir")
    p.add_argument("--json")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="gpulab-bench-server-"))
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"student{i:04}" for i in range(args.students)]
    (folder / "roster.csv").write_text("id,name,email\n" + "".join(f"{s},{s},{s}@example.org\n" for s in ids))
    subprocess.run([str(Path(args.build) / "gpulab"), "roster", "--dir", str(folder / "server"), "--import",
                    str(folder / "roster.csv")], check=True, stdout=subprocess.DEVNULL)
    tokens = dict(line.split(",", 1) for line in (folder / "server/tokens.csv").read_text().split()[1:])
    labs = [(name, student_files(lab_folder(name))) for name in args.labs.split(",")]
    server, url = start_server(args, folder)
    rng = random.Random(args.seed)
    moments = sorted((rng.uniform(0, args.window), s) for s in ids)
    sent, refused, lock = {}, [], threading.Lock()
    began = time.time()

    def send(index, student):
        name, files = labs[index % len(labs)]
        body, kind = multipart({"lab": name}, files)
        status, answer = request(url + "/api/submissions", tokens[student], body, kind)
        with lock:
            (sent.__setitem__(answer["id"], student) if status == 202 else refused.append((student, status, answer)))

    threads = []
    for index, (moment, student) in enumerate(moments):
        time.sleep(max(0.0, began + moment - time.time()))
        t = threading.Thread(target=send, args=(index, student))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    window_s = time.time() - began
    db = sqlite3.connect(folder / "server/gpulab.sqlite")
    while db.execute("SELECT COUNT(*) FROM submissions WHERE state IN ('receiving','queued','running')").fetchone()[0]:
        time.sleep(2)
    rows = db.execute("SELECT s.id, s.state, s.submitted_at, s.started_at, s.finished_at, s.attempts, "
                      "(SELECT COUNT(*) FROM gradings g WHERE g.submission = s.id), "
                      "(SELECT MIN(passed) FROM gradings g WHERE g.submission = s.id) FROM submissions s").fetchall()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    graded_once = [r for r in rows if r[1] == "graded" and r[6] == 1]
    figures = {
        "students": args.students, "labs": args.labs, "workers": args.workers, "backend": args.backend,
        "window_s": round(window_s, 1), "sent": len(sent), "refused": len(refused), "recorded": len(rows),
        "graded_once": len(graded_once), "passed": sum(1 for r in graded_once if r[7]),
        "not_graded_once": [r[0] for r in rows if r not in graded_once],
        "lost": sorted(set(sent) - {r[0] for r in rows}),
        "waited": percentiles([r[3] - r[2] for r in graded_once]),
        "grading": percentiles([r[4] - r[3] for r in graded_once]),
        "first_submission_to_last_grading_s": round(max(r[4] for r in rows) - min(r[2] for r in rows), 1) if rows else 0,
        "folder": str(folder),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    # The solutions pass: a grading that fails them is the grader's fault under load.
    ok = len(graded_once) == len(sent) == args.students and not refused and figures["passed"] == len(graded_once)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
