#!/usr/bin/env python3
"""Compares what zeus_load's clients were answered (its JSON-lines log) with the database.

  check_answered.py --log answered.jsonl --db URL [--server http://...] [--strict]

URL: postgresql://... (read with psql), mysql://user:password@host:port/db (also mariadb:// and
mysql+<driver>://, ?unix_socket=/path; read with the mariadb client) or sqlite:///path (read with
Python's sqlite3).
Checks, for every job in the log:
  - trial numbers in the database are 1..n (unique and dense);
  - every trial handed out (event "next") was handed out once and is stored with its batch size;
  - every answered report is stored: the trial holds the values of its last answered report
    (a later, unanswered one may have replaced them only without --strict), and a report
    answered with stop_train is stored as ended with the answered outcome;
  - no pruning slot (round, batch size) was explored twice;
  - ended trials' cost = eta*energy + (1 - eta)*max_power*time;
  - with --strict (no crash): every stored trial was answered and none is still dispatched;
  - with --server: GET /jobs/{id} shows the stored trials, and each batch size's belief equals a
    replay of the stored history (Gaussian belief of docs/server.md).
Prints one line per problem and exits 1 if there is any.
"""
import argparse
import collections
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import urllib.parse
import urllib.request

COLUMNS = ["job_id", "trial_number", "batch_size", "kind", "pruning_round", "status", "time_s",
           "energy_j", "cost", "epochs", "metric"]


def read_trials(url):
    query = "SELECT " + ", ".join(COLUMNS) + " FROM trials ORDER BY job_id, trial_number"
    if url.startswith("sqlite://"):
        db = sqlite3.connect("file:" + url[len("sqlite://"):] + "?mode=ro", uri=True)
        rows = db.execute(query).fetchall()
        db.close()
    elif re.match(r"^(mysql|mariadb)(\+\w+)?://", url):
        rows = read_mysql(url, query)
    else:
        out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", url, "-c", query],
                             check=True, capture_output=True, text=True).stdout
        rows = [line.split("\t") for line in out.splitlines() if line]
    trials = collections.defaultdict(list)
    for row in rows:
        t = dict(zip(COLUMNS, row))
        for k in ("trial_number", "batch_size", "pruning_round", "epochs"):
            t[k] = int(t[k])
        for k in ("time_s", "energy_j", "cost", "metric"):
            t[k] = float(t[k])
        trials[t["job_id"]].append(t)
    return trials


def read_mysql(url, query):
    """Rows of query on a MySQL/MariaDB URL, with the mariadb client (password in MYSQL_PWD, so
    never on a command line)."""
    u = urllib.parse.urlsplit(url)
    params = urllib.parse.parse_qs(u.query)
    command = ["mariadb", "--no-defaults", "-B", "-N", "-D", urllib.parse.unquote(u.path[1:]),
               "-e", query]
    if u.username:
        command += ["-u", urllib.parse.unquote(u.username)]
    if "unix_socket" in params:
        command += ["--protocol=socket", "-S", params["unix_socket"][0]]
    else:
        command += ["--protocol=tcp", "-h", u.hostname or "localhost", "-P", str(u.port or 3306)]
    env = dict(os.environ, MYSQL_PWD=urllib.parse.unquote(u.password or ""))
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def replay_beliefs(spec, trials):
    """Each batch size's belief from the ended trials' costs, as docs/server.md says."""
    beliefs = {}
    for b in spec["batch_sizes"]:
        costs = [t["cost"] for t in trials
                 if t["batch_size"] == b and t["status"] in ("converged", "not_converged")]
        if spec["window_size"] > 0:
            costs = costs[-spec["window_size"]:]
        n = len(costs)
        pp, pm = spec["mab_prior_precision"], spec["mab_prior_mean"]
        mean = sum(costs) / n if n else None
        var = sum((c - mean) ** 2 for c in costs) / n if n else 0.0
        if n == 0:
            belief = (pm, 1 / math.sqrt(pp)) if pp > 0 else (None, None)
        elif n == 1 or var == 0:
            belief = (mean, 0.0)
        else:
            precision = pp + n / var
            belief = ((pp * pm + sum(costs) / var) / precision, 1 / math.sqrt(precision))
        beliefs[b] = (n, belief)
    return beliefs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--server")
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()

    problems = []
    handed_out = {}
    reports = collections.defaultdict(list)
    with open(args.log) as f:
        for line in f:
            e = json.loads(line)
            key = (e["job_id"], e["trial_number"])
            if e["event"] == "next":
                if key in handed_out:
                    problems.append(f"trial {key} was handed out twice")
                handed_out[key] = e["batch_size"]
            else:
                reports[key].append(e)
    trials = read_trials(args.db)
    jobs = sorted({job for job, _ in handed_out})
    if not jobs:
        problems.append("the log holds no answered requests")
    stored = {}
    for job in jobs:
        numbers = [t["trial_number"] for t in trials[job]]
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append(f"{job}: trial numbers are not 1..{len(numbers)}: {numbers}")
        slots = collections.Counter((t["pruning_round"], t["batch_size"]) for t in trials[job]
                                    if t["kind"] == "pruning" and t["status"] != "failed")
        for slot, count in slots.items():
            if count > 1:
                problems.append(f"{job}: pruning round {slot[0]} explored batch size {slot[1]} "
                                f"{count} times")
        for t in trials[job]:
            stored[(job, t["trial_number"])] = t
            if t["status"] in ("converged", "not_converged"):
                want = 0.5 * t["energy_j"] + 0.5 * 300 * t["time_s"]
                if not close(t["cost"], want):
                    problems.append(f"{job} trial {t['trial_number']}: cost {t['cost']} != {want}")
            if args.strict:
                if (job, t["trial_number"]) not in handed_out:
                    problems.append(f"{job} trial {t['trial_number']} is stored but was never "
                                    "answered")
                if t["status"] == "dispatched":
                    problems.append(f"{job} trial {t['trial_number']} is still dispatched")
    for key, batch_size in handed_out.items():
        t = stored.get(key)
        if t is None:
            problems.append(f"answered trial {key} is not stored")
        elif t["batch_size"] != batch_size:
            problems.append(f"trial {key}: answered batch size {batch_size}, stored "
                            f"{t['batch_size']}")
    checked = 0
    for key, answered in reports.items():
        t = stored.get(key)
        if t is None:
            problems.append(f"reports were answered for trial {key}, which is not stored")
            continue
        last = max(answered, key=lambda r: r["current_epoch"])
        checked += len(answered)
        if t["epochs"] < last["current_epoch"] or (args.strict and
                                                   t["epochs"] != last["current_epoch"]):
            problems.append(f"trial {key}: the report of epoch {last['current_epoch']} was "
                            f"answered but the store holds epoch {t['epochs']}")
            continue
        if t["epochs"] == last["current_epoch"]:
            for field, column in (("time", "time_s"), ("energy", "energy_j"),
                                  ("metric", "metric")):
                if t[column] != last[field]:
                    problems.append(f"trial {key}: answered {field} {last[field]}, stored "
                                    f"{t[column]}")
        if last["stop_train"]:
            ended = t["status"] in ("converged", "not_converged")
            if not ended or (t["status"] == "converged") != last["converged"]:
                problems.append(f"trial {key}: answered stop (converged={last['converged']}) "
                                f"but stored status {t['status']}")
    if args.server:
        for job in jobs:
            with urllib.request.urlopen(f"{args.server}/jobs/{job}") as r:
                view = json.load(r)
            shown = [(t["trial_number"], t["status"], t["cost"]) for t in view["trials"]]
            want = [(t["trial_number"], t["status"], t["cost"]) for t in trials[job]]
            if len(shown) != len(want) or any(
                    a[0] != b[0] or a[1] != b[1] or not close(a[2], b[2])
                    for a, b in zip(shown, want)):
                problems.append(f"{job}: GET /jobs/{job} shows other trials than the store")
            beliefs = replay_beliefs(view["job"], trials[job])
            for arm in view["arms"]:
                n, (mean, std) = beliefs[arm["batch_size"]]
                if (arm["num_observations"] != n or not close(arm["mean_cost"], mean)
                        or not close(arm["stddev_cost"], std)):
                    problems.append(f"{job} batch size {arm['batch_size']}: server belief "
                                    f"{arm} != replay (n={n}, mean={mean}, std={std})")
    for p in problems[:50]:
        print("FAIL:", p)
    total_trials = sum(len(trials[j]) for j in jobs)
    print(f"checked {len(jobs)} jobs, {total_trials} stored trials, {len(handed_out)} answered "
          f"trials, {checked} answered reports: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
