#!/usr/bin/env python3
"""Helpers of bench/agent/run.sh: measure a command's CPU time, and print the comparison table."""
import glob
import json
import os
import resource
import subprocess
import sys


def measure(out, cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(out, "w") as f:
        f.write("%f %d\n" % (cpu, rc))
    if rc != 0:
        sys.exit("command failed (%d): %s" % (rc, " ".join(cmd)))


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))] if v else float("nan")


def dump(agent, log, view):
    out = subprocess.run([agent, "dump", log, view], check=True, capture_output=True, text=True).stdout
    lines = out.strip().split("\n")
    return [dict(zip(lines[0].split(","), l.split(","))) for l in lines[1:]]


def summary(agent, log):
    out = subprocess.run([agent, "dump", log], check=True, capture_output=True, text=True).stdout
    return dict(l.split(": ", 1) for l in out.strip().split("\n") if ": " in l)


def report(work, agent, secs):
    secs = float(secs)
    rows = []
    # powerdag-agent
    jobs = dump(agent, work + "/agent/run.pdlog", "jobs")
    lat = [(int(j["start_ns"]) - int(j["release_ns"])) / 1e3 for j in jobs]
    work_s = sum(int(j["demand_ns"]) for j in jobs) / 1e9  # configured work, as for rt-app
    cpu = float(open(work + "/agent.cpu").read().split()[0])
    misses = summary(agent, work + "/agent/run.pdlog")["misses"]
    rows.append(("powerdag-agent", len(lat), lat, (cpu - work_s) / secs * 100, misses))
    with open(work + "/agent/run.pdlog", "rb") as f:
        hdr = json.loads(f.readline())
    steady = (cpu - hdr["setup_cpu_ns"] / 1e9 - work_s) / secs * 100
    # rt-app: per-thread logs, wu_lat (us) and run (us) columns
    lat, run_us, n = [], 0.0, 0
    for fn in glob.glob(work + "/rtapp/rt-*.log"):
        for line in open(fn):
            if line.startswith("#") or not line.strip():
                continue
            f = line.split()
            run_us += float(f[8])  # c_duration: the configured run time of the loop
            lat.append(float(f[10]))
            n += 1
    cpu = float(open(work + "/rtapp.cpu").read().split()[0])
    rows.append(("rt-app", n, lat, (cpu - run_us / 1e6) / secs * 100, "n/a"))
    print("Periodic set (3 SCHED_DEADLINE tasks on CPU 1, %g s each)" % secs)
    print("%-16s %7s %10s %10s %10s %14s %7s" % ("executor", "jobs", "p50 us", "p99 us", "max us", "overhead %CPU", "misses"))
    for name, n, l, ov, m in rows:
        print("%-16s %7d %10.1f %10.1f %10.1f %14.3f %7s" % (name, n, pct(l, 0.5), pct(l, 0.99), max(l) if l else float("nan"), ov, m))
    print("(overhead = process CPU time - the configured work of the jobs, start-up included;"
          " powerdag-agent without its start-up: %.3f %%CPU)" % steady)
    print()
    print("Power sampler, 18 rails, local backend on a fake tree (%g s each)" % secs)
    print("%-10s %9s %15s %13s" % ("rate", "samples", "sampler %CPU", "us per tick"))
    for hz in (100, 1000):
        s = summary(agent, "%s/s%d/run.pdlog" % (work, hz))
        cpu_ms = float(s["sampler_cpu_ms"])
        n = int(s["power_samples"])
        print("%-10s %9d %15.3f %13.1f" % ("%d Hz" % hz, n, cpu_ms / 1e3 / secs * 100, cpu_ms * 1e3 / max(n, 1)))


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(sys.argv[2], sys.argv[sys.argv.index("--") + 1:])
    else:
        report(sys.argv[2], sys.argv[3], sys.argv[4])
