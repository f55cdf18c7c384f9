#!/usr/bin/env python3
"""Power tables of platform files, for the profile test and bench (tests/cli/profile_twin_e2e.sh,
bench/profile/run.sh).

  power_table.py perturb SRC SEED OUT   every busy/idle of SRC's islands and GPUs times a factor drawn
                                        in [0.8, 1.25] (busy >= idle kept): a board whose power table
                                        differs from its datasheet
  power_table.py compare TRUTH FITTED   |fitted - truth| / truth over every entry both have; prints
                                        "entries N median M worst W" (percent) and the worst entries
"""
import random
import re
import statistics
import sys

OPP = re.compile(r'\{freq: ([^,]+), busy: ([^,]+), idle: ([^}]+)\}')
NAME = re.compile(r'^\s*-? ?\{?name: ([A-Za-z0-9_.-]+)')
UNITS = {'W': 1e6, 'mW': 1e3, 'uW': 1.0, 'µW': 1.0}


def uw(text):
    m = re.fullmatch(r'([0-9.]+)(W|mW|uW|µW)', text.strip())
    return round(float(m.group(1)) * UNITS[m.group(2)])


def fmt(v):
    return '%duW' % v


def entries(path):
    """{(component, freq, 'busy'|'idle'): uW} of the file's islands and GPUs (provenance ignored)."""
    out, name = {}, None
    for line in open(path):
        if re.match(r'^\s*provenance:', line):
            break
        m = NAME.match(line)
        if m:
            name = m.group(1)
        for f, b, i in OPP.findall(line):
            out[(name, f, 'busy')] = uw(b)
            out[(name, f, 'idle')] = uw(i)
    return out


def perturb(src, seed, dst):
    rng = random.Random(int(seed))
    lines = []
    for line in open(src):
        def repl(m):
            b, i = uw(m.group(2)), uw(m.group(3))
            i2 = round(i * rng.uniform(0.8, 1.25))
            b2 = max(round(b * rng.uniform(0.8, 1.25)), i2)
            return '{freq: %s, busy: %s, idle: %s}' % (m.group(1), fmt(b2), fmt(i2))
        lines.append(OPP.sub(repl, line))
    open(dst, 'w').write(''.join(lines))


def compare(truth, fitted):
    t, f = entries(truth), entries(fitted)
    errs = sorted((abs(f[k] - v) / v * 100, k, v, f[k]) for k, v in t.items() if k in f and v > 0)
    if not errs:
        print('entries 0 median nan worst nan')
        return 1
    a = [e[0] for e in errs]
    print('entries %d median %.3f worst %.3f' % (len(a), statistics.median(a), a[-1]))
    for e, k, v, g in errs[-5:]:
        print('  %s %s %s: truth %d uW, fitted %d uW, %+.2f %%' % (k[0], k[1], k[2], v, g, (g - v) / v * 100))
    return 0


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'perturb':
        perturb(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == 'compare':
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
