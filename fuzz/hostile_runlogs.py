#!/usr/bin/env python3
# Writes the hostile run-log seeds of fuzz/corpus/fuzz_runlog/ (checksum-valid records with indices out
# of range, extreme times and power values, empty power records, saturating drop counts) after the
# header line of a real twin run (fuzz/rundir/run.pdlog). Usage: fuzz/hostile_runlogs.py (from anywhere).
# The unit test tests/reports/test_hostile_runlog.c writes the same kinds in C.
import os, struct, zlib

here = os.path.dirname(os.path.abspath(__file__))
header = open(os.path.join(here, "rundir", "run.pdlog"), "rb").read().split(b"\n", 1)[0] + b"\n"
I64_MIN, I64_MAX, U64_MAX, U32_MAX, I32_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1, (1 << 32) - 1, (1 << 31) - 1

def rec(typ, payload):
    head = struct.pack("<IHH", len(payload), typ, 0)
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))

inst = lambda dag, miss, seq, rel, fin, resp: rec(1, struct.pack("<IIQqqq", dag, miss, seq, rel, fin, resp))
job = lambda task, seq, rel, st, en, cpu_ns, dem, cpu=0, flags=0: rec(
    2, struct.pack("<IIQqqqqqiI", task, 0, seq, rel, st, en, cpu_ns, dem, cpu, flags))
power = lambda t, first, vals, n=None: rec(3, struct.pack("<qII", t, first, len(vals) if n is None else n) +
                                         b"".join(struct.pack("<q", v) for v in vals))
gap = lambda rail, a, b: rec(4, struct.pack("<Iiqq", rail, 5, a, b))
opp = lambda kind, idx, t, khz: rec(5, struct.pack("<IIqq", kind, idx, t, khz))
end = lambda t, dropped=0: rec(7, struct.pack("<qQqqqII", t, dropped, 1, 1, 1, 0, 0))
drop = lambda n: rec(8, struct.pack("<IIQ", 0, 0, n))
foreign = lambda a, t, q, d, p, tid, cpu, comm: rec(11, struct.pack("<qqqqqii16s", a, t, q, d, p, tid, cpu, comm))

seeds = {
    "hostile-index": inst(1000, 1, 0, 0, 10, 10) + job(U32_MAX, 0, 0, 1, 2, 1, 1) + gap(99, 0, 10) +
                     opp(1, 1000, 0, 5) + power(0, 4, [1, 2]) + end(10**9),
    "hostile-times": inst(0, 1, U64_MAX, I64_MIN, I64_MAX, I64_MAX) + job(0, 0, I64_MIN, I64_MAX, I64_MIN, I64_MAX, I64_MIN) +
                     gap(0, I64_MIN, I64_MAX) + gap(1, I64_MIN, I64_MAX) + opp(0, 0, I64_MAX, I64_MAX) + end(I64_MAX, U64_MAX),
    "hostile-power": power(0, 0, [I64_MAX] * 5) + power(1, 0, [I64_MAX - 1] * 5) + power(I64_MIN, 0, [-(1 << 62)] * 5) +
                     power(2, 0, [], 0) + drop(U64_MAX) + drop(U64_MAX) + end(3),
    "hostile-near-limits": inst(0, 0, 0, -(1 << 60), 1 << 60, 1 << 60) + job(0, 0, -(1 << 60), -(1 << 60), 1 << 60, 1 << 60, 1 << 60) +
                           gap(0, -(1 << 60), 1 << 60) + gap(0, -(1 << 60), 1 << 60) + power(-(1 << 60), 0, [10**12] * 5) +
                           power(1 << 60, 0, [10**12] * 5) + end(1 << 60),
    # other processes' reservations: a comm of invalid UTF-8, control bytes and a comma; edges of the
    # reader's limits; one thread seen twice; ones the reader must refuse (runtime > deadline, no tid)
    "hostile-foreign": inst(0, 1, 3, 0, 10**9, 10**9) + foreign(0, 5 * 10**8, 1, 1, 1, 7, 0, b"\xff\xfe\x1b[31m,\"x") +
                       foreign(0, 10**9, 1, 1, 1, 7, 0, b"a" * 16) + foreign(-(1 << 60), 1 << 60, 1 << 60, 1 << 60, 1 << 60, I32_MAX, 1023, b"") +
                       foreign(0, 1, 5, 4, 4, 8, 0, b"bad") + foreign(0, 1, 1, 1, 1, 0, 0, b"notid") + end(2 * 10**9),
}
for name, body in seeds.items():
    open(os.path.join(here, "corpus", "fuzz_runlog", name + ".pdlog"), "wb").write(header + body)
# no rails at all: an empty power record once wrote nothing into a NULL row
norails = b'{"format":"powerdag-runlog","version":1,"dags":[{"name":"demo"}],"tasks":[],"rails":[]}\n'
open(os.path.join(here, "corpus", "fuzz_runlog", "hostile-norails.pdlog"), "wb").write(
    norails + power(0, 0, [], 0) + inst(0, 0, 0, 0, 1, 1) + inst(5, 0, 0, 0, 1, 1) + end(5))
