#!/usr/bin/env python3
"""Per-source-line totals of an Nsight Compute profile of a gtap kernel.

usage: sass_lines.py PROFILE.sass.csv.gz KERNEL.cubin STEPS [--nvdisasm PATH] [--top N]
                     [--profiled-cubin PLAIN.cubin | --extract-from BINARY]

PROFILE.sass.csv.gz is what `ncu_prof` (bench/device-call.sh) writes with the SourceCounters
section: every SASS instruction of the profiled kernel with its execution count and stall
samples. KERNEL.cubin is the same kernel's module from a build with `GTAP_LINEINFO=1` (the
profiled binary's own): `nvdisasm -g` names the Rust file and line of each instruction (the
innermost one, for inlined code). STEPS (the launch's steps, from its statistics) turns counts
into warp instructions a step.

With `--profiled-cubin PLAIN.cubin` (the profiled binary's own module, built without line
tables) KERNEL.cubin may come from another build of the same code with `GTAP_LINEINFO=1`: the
two instruction streams are aligned (registers and constants ignored) and each profiled
instruction takes the line of the one it matches, so the profile need not be of a line-table
build (which runs 1-2.5 % slower, `bench/NOTES.md` entry 98). The modules of a gtap-bench
binary are inside it; `--extract-from BINARY` finds the profiled kernel's there.

Prints, per file and per line, the warp instructions a step and the share of stall samples,
split by how often an instruction runs: `sched` (at most about once a step: the scheduling
warp alone) against the rest; with `--opcodes`, the scheduling part by SASS opcode as well.
"""
import argparse
import collections
import csv
import difflib
import gzip
import os
import re
import struct
import subprocess
import tempfile


def disassemble(nvdisasm, cubin, kernel):
    """[(offset, instruction, 'file:line')] of `kernel`'s own section ('?' without lines)."""
    text = subprocess.run([nvdisasm, "-g", "-c", cubin], check=True, capture_output=True,
                          text=True).stdout
    out, here, inside = [], "?", False
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
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip(), here))
    return out


def line_of_each_offset(nvdisasm, cubin, kernel):
    """{offset: 'file:line'} for the instructions of `kernel`'s own section."""
    return {off: here for off, _, here in disassemble(nvdisasm, cubin, kernel)}


def carried_lines(nvdisasm, lined, plain, kernel):
    """{offset in `plain`: 'file:line'} from `lined`, another build of the same code with line
    tables, by aligning the two instruction streams with registers and constants ignored."""
    a, b = disassemble(nvdisasm, plain, kernel), disassemble(nvdisasm, lined, kernel)

    def key(text):
        return re.sub(r"0x[0-9a-f]+|\bU?R\d+\b|\bU?P\d\b", "X", text)

    match = difflib.SequenceMatcher(None, [key(t) for _, t, _ in a], [key(t) for _, t, _ in b],
                                    autojunk=False)
    out = {}
    for block in match.get_matching_blocks():
        for k in range(block.size):
            out[a[block.a + k][0]] = b[block.b + k][2]
    print("note: %d of the profiled build's %d instructions matched the line-table build's" %
          (len(out), len(a)))
    return out


def extract_cubin(binary, kernel, path):
    """Writes the sm_90 module holding `kernel` out of a gtap-bench binary (its modules are
    embedded ELF files) to `path`."""
    with open(binary, "rb") as f:
        data = f.read()
    at = -1
    while True:
        at = data.find(b"\x7fELF\x02\x01\x01", at + 1)
        if at < 0:
            raise SystemExit("no module with %s in %s" % (kernel, binary))
        if struct.unpack_from("<H", data, at + 0x12)[0] != 190:  # EM_CUDA
            continue
        phoff, shoff = struct.unpack_from("<QQ", data, at + 0x20)
        phsize, phnum, shsize, shnum = struct.unpack_from("<HHHH", data, at + 0x36)
        end = max(phoff + phsize * phnum, shoff + shsize * shnum)
        for k in range(shnum):
            header = at + shoff + k * shsize
            kind = struct.unpack_from("<I", data, header + 4)[0]
            offset, size = struct.unpack_from("<QQ", data, header + 0x18)
            if kind != 8:  # SHT_NOBITS takes no room in the file
                end = max(end, offset + size)
        module = data[at:at + end]
        if (".text." + kernel).encode() + b"\0" in module:
            with open(path, "wb") as f:
                f.write(module)
            return


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("cubin")
    ap.add_argument("steps", type=float)
    ap.add_argument("--nvdisasm", default="nvdisasm")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--opcodes", action="store_true",
                    help="also the scheduling part's instructions and samples by opcode")
    plain = ap.add_mutually_exclusive_group()
    plain.add_argument("--profiled-cubin",
                       help="the profiled build's own module, when CUBIN is another build's")
    plain.add_argument("--extract-from", metavar="BINARY",
                       help="take the profiled module out of this gtap-bench binary")
    a = ap.parse_args()
    rows = list(csv.reader(gzip.open(a.profile, "rt")))
    kernel = rows[0][1]
    hdr, data = rows[1], rows[2:]
    col = {name: hdr.index(name) for name in
           ("Address", "Source", "Instructions Executed", "Warp Stall Sampling (All Samples)")}
    if a.extract_from:
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, kernel + ".cubin")
            extract_cubin(a.extract_from, kernel, plain)
            lines = carried_lines(a.nvdisasm, a.cubin, plain, kernel)
    elif a.profiled_cubin:
        lines = carried_lines(a.nvdisasm, a.cubin, a.profiled_cubin, kernel)
    else:
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
        why = "not matched" if a.profiled_cubin or a.extract_from else "another build's cubin?"
        print("note: %d profiled instructions have no line (%s)" % (unmatched, why))
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
