#!/usr/bin/env python3
"""Per-source-line totals of an Nsight Compute profile of a gtap kernel.

usage: sass_lines.py PROFILE.sass.csv.gz KERNEL.cubin STEPS [--nvdisasm PATH] [--top N]

PROFILE.sass.csv.gz is what `ncu_prof` (bench/device-call.sh) writes with the SourceCounters
section: every SASS instruction of the profiled kernel with its execution count and stall
samples. KERNEL.cubin is the same kernel's module from a build with `GTAP_LINEINFO=1` (the
profiled binary's own): `nvdisasm -g` names the Rust file and line of each instruction (the
innermost one, for inlined code). STEPS (the launch's steps, from its statistics) turns counts
into warp instructions a step.

Prints, per file and per line, the warp instructions a step and the share of stall samples,
split by how often an instruction runs: `sched` (at most about once a step: the scheduling
warp alone) against the rest; with `--opcodes`, the scheduling part by SASS opcode as well.
"""
import argparse
import collections
import csv
import gzip
import re
import subprocess


def line_of_each_offset(nvdisasm, cubin, kernel):
    """{offset: 'file:line'} for the instructions of `kernel`'s own section."""
    text = subprocess.run([nvdisasm, "-g", "-c", cubin], check=True, capture_output=True,
                          text=True).stdout
    out, here, inside = {}, "?", False
    for line in text.splitlines():
        if line.startswith("//----"):
            inside = (".text." + kernel + " ") in line + " "
            continue
        if not inside:
            continue
        m = re.match(r'\s*//## File "(.*)", line (\d+)', line)
        if m:
            path = m.group(1)
            for marker in ("/src/", "/library/"):
                if marker in path:
                    path = path.split(marker, 1)[0].rsplit("/", 1)[-1] + marker + path.split(marker, 1)[1]
                    break
            here = "%s:%s" % (path, m.group(2))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", line)
        if m:
            out[int(m.group(1), 16)] = here
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("cubin")
    ap.add_argument("steps", type=float)
    ap.add_argument("--nvdisasm", default="nvdisasm")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--opcodes", action="store_true",
                    help="also the scheduling part's instructions and samples by opcode")
    a = ap.parse_args()
    rows = list(csv.reader(gzip.open(a.profile, "rt")))
    kernel = rows[0][1]
    hdr, data = rows[1], rows[2:]
    col = {name: hdr.index(name) for name in
           ("Address", "Source", "Instructions Executed", "Warp Stall Sampling (All Samples)")}
    lines = line_of_each_offset(a.nvdisasm, a.cubin, kernel)
    base = int(data[0][col["Address"]], 16)
    total = sum(int(r[col["Warp Stall Sampling (All Samples)"]]) for r in data) or 1
    by_line = collections.defaultdict(lambda: [0.0, 0, 0.0, 0])
    by_opcode = collections.defaultdict(lambda: [0.0, 0, 0.0, 0])
    unmatched = 0
    for r in data:
        off = int(r[col["Address"]], 16) - base
        per_step = int(r[col["Instructions Executed"]]) / a.steps
        samples = int(r[col["Warp Stall Sampling (All Samples)"]])
        where = lines.get(off)
        if where is None:
            unmatched += 1
            where = "?"
        words = [w for w in r[col["Source"]].split() if not w.startswith("@")]
        opcode = words[0].split(".")[0] if words else "?"
        for acc in (by_line[where], by_opcode[opcode]):
            if 0 < per_step < 1.2:
                acc[0] += per_step
                acc[1] += samples
            else:
                acc[2] += per_step
                acc[3] += samples
    if unmatched:
        print("note: %d profiled instructions have no line (another build's cubin?)" % unmatched)
    by_file = collections.defaultdict(lambda: [0.0, 0, 0.0, 0])
    for where, acc in by_line.items():
        f = by_file[where.rsplit(":", 1)[0]]
        for i in range(4):
            f[i] += acc[i]

    def table(title, items, n):
        print("\n%s\n%-48s %8s %7s %8s %7s" % (title, "where", "sched/st", "smp%", "rest/st", "smp%"))
        for where, (si, ss, ri, rs) in items[:n]:
            print("%-48s %8.1f %6.2f%% %8.1f %6.2f%%" % (where[-48:], si, 100 * ss / total, ri, 100 * rs / total))

    print("kernel %s, %d instructions profiled, %.0f warp instructions a step" %
          (kernel, len(data), sum(v[0] + v[2] for v in by_file.values())))
    table("by file (most scheduling instructions first)",
          sorted(by_file.items(), key=lambda kv: -kv[1][0]), a.top)
    table("by line, scheduling part (most instructions first)",
          sorted(by_line.items(), key=lambda kv: -kv[1][0]), a.top)
    table("by line (most stall samples first)",
          sorted(by_line.items(), key=lambda kv: -(kv[1][1] + kv[1][3])), a.top)
    if a.opcodes:
        table("by opcode, scheduling part (most stall samples first)",
              sorted(by_opcode.items(), key=lambda kv: -kv[1][1]), a.top)


if __name__ == "__main__":
    main()
