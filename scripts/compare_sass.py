#!/usr/bin/env python3
"""Compare the machine code of two builds of a CUDA library kernel by kernel.

    scripts/compare_sass.py OLD.so NEW.so [--filter sm90_gemm] [--diff 40] [--dump DIR]

For every kernel (keyed by architecture and mangled name) the SASS listing of
`cuobjdump -sass` is normalized (addresses and encodings dropped, the
per-file hash of anonymous namespaces replaced) and the two builds compared.
Prints one line per kernel, `identical` or `differs` with the size of the
difference, the register counts of both builds (`cuobjdump -res-usage`), and
a summary per kernel family (sm90_gemm, sm100_gemm, ...). --diff N prints the
first N lines of a unified diff of each differing kernel; --dump DIR writes
the normalized listings (DIR/old, DIR/new) for a closer look with any diff
tool. Exit status: 0 when every kernel is identical, 1 when any differs or is
missing from one build, 2 on a usage or tool error.

What "identical" means: the same instructions with the same operands in the
same order (branch targets included, as offsets within the kernel), so the
same speed. A refactoring of kernel source that keeps every kernel identical
cannot have changed behaviour or performance.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def find_cuobjdump(hint: str | None) -> str:
    candidates = [hint] if hint else []
    candidates += [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump",
                   str(HERE.parent / ".tools/nvidia/cu13/bin/cuobjdump")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("compare_sass: cuobjdump not found (PATH, /usr/local/cuda/bin, .tools/); pass --cuobjdump")


# cuobjdump names anonymous namespaces after the file and a hash of it:
# _GLOBAL__N__128ace66_17_reference_gemm_cu_b796e00c. The hash changes with
# the path of the source tree, not with the code.
ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_(\d+_\w+?_cu)_[0-9a-f]{8}")
ADDR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*")
ENCODING = re.compile(r"/\*\s*0x[0-9a-f]{16}\s*\*/")


def normalize_name(name: str) -> str:
    return ANON.sub(r"_GLOBAL__N__\1", name)


MANGLED: dict[str, str] = {}  # normalized name -> a mangled name it came from (for c++filt)


def sass_by_kernel(cuobjdump: str, lib: str) -> "OrderedDict[tuple[str, str], list[str]]":
    out = subprocess.run([cuobjdump, "-sass", lib], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"compare_sass: cuobjdump -sass {lib} failed:\n{out.stderr}")
    kernels: "OrderedDict[tuple[str, str], list[str]]" = OrderedDict()
    key = None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            key = ["?", normalize_name(m.group(1))]
            MANGLED.setdefault(key[1], m.group(1))
            kernels[tuple(key)] = []
            continue
        if key is None:
            continue
        m = re.search(r"EF_CUDA_SM(\d+)\b", line)
        if m and ".headerflags" in line:
            listing = kernels.pop(tuple(key))
            key[0] = "sm_" + m.group(1)
            kernels[tuple(key)] = listing
            continue
        if not ADDR.match(line):  # encodings, headers between ELF images
            continue
        text = ENCODING.sub("", ADDR.sub("", line)).strip()
        kernels[tuple(key)].append(ANON.sub(r"_GLOBAL__N__\1", text))
    return kernels


def registers_by_kernel(cuobjdump: str, lib: str) -> dict[tuple[str, str], str]:
    out = subprocess.run([cuobjdump, "-res-usage", lib], capture_output=True, text=True)
    if out.returncode != 0:
        return {}
    regs: dict[tuple[str, str], str] = {}
    arch = "?"
    name = None
    for line in out.stdout.splitlines():
        m = re.match(r"arch = sm_(\d+)", line.strip())
        if m:
            arch = "sm_" + m.group(1)
            continue
        m = re.match(r"\s*Function (\S+):\s*$", line)
        if m:
            name = normalize_name(m.group(1))
            continue
        m = re.search(r"REG:(\d+)", line)
        if m and name:
            regs[(arch, name)] = m.group(1)
            name = None
    return regs


def opcode(line: str) -> str:
    """The opcode of a SASS line, predicate and modifiers dropped: '@!P0 IMAD.MOV.U32 R1, ...' -> 'IMAD'."""
    words = line.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


# What a kernel does, as opposed to how it computes addresses and indices:
# tensor-core ops, loads and stores of every space, barriers, fences, TMA,
# warpgroup register moves. Integer and predicate arithmetic, moves,
# conversions and branches are left out.
SKELETON = re.compile(r"^(HGMMA|UTC\w*|LDTM|STTM|WARPGROUP|USETMAXREG|SYNCS|UTMA\w*|UBLKCP|UBLKRED|LDSM|STSM|LDS|STS|"
                      r"LDG|STG|LD|ST|ATOM\w*|RED|BAR|MEMBAR|DEPBAR|FENCE|CCTL|ELECT|UGETNEXTWORKID|ERRBAR|"
                      r"NANOSLEEP|EXIT|RET|BPT|CALL|WARPSYNC|VOTEU?|MATCH|REDUX|SHFL|UCGABAR_\w+|CGAERRBAR|UTCATOMSWS|STAS)$")


def skeleton(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        words = line.rstrip(" ;").split(None, 1)
        if words and words[0].startswith("@"):
            words = line.rstrip(" ;").split(None, 2)[1:]
        if not words or not SKELETON.match(opcode(" ".join(words))):
            continue
        text = " ".join(words)
        text = re.sub(r"\[[^\]]*\]", "[.]", text)  # addressing: base registers and folded offsets
        if opcode(text) in ("CALL", "WARPSYNC"):  # code addresses
            text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
        text = re.sub(r"\bU?R\d+\b", "R", text)
        text = re.sub(r"\bU?P\d\b", "P", text)
        out.append(text)
    return out


HOT = (("HGMMA", "HGMMA"), ("UTCHMMA", "UTCHMMA"), ("UTMALDG", "UTMALDG"), ("LDTM", "LDTM"), ("STSM", "STSM"),
       ("STS", "STS"), ("UTMASTG", "UTMASTG"))


def hot_loops(lines: list[str]) -> list[tuple[str, int]]:
    """(what it issues, instructions) of every loop, in address order, that issues any HOT instruction.
    A loop is a backward branch and its target (instruction i sits at i * 16 bytes)."""
    out = []
    for i, line in enumerate(lines):
        # Conditional backward branches: loop back edges. (An unconditional
        # one is the way back from an out-of-line retry of a barrier wait.)
        m = re.search(r"^@!?U?P\w+\s+BRA(?:\.\S+)?\s+(?:\S+,\s*)?0x([0-9a-f]+)", line)
        if not m:
            continue
        j = int(m.group(1), 16) // 16
        if j > i:
            continue
        body = lines[j : i + 1]
        tags = [tag for tag, op in HOT if any(opcode(b) == op for b in body)]
        if tags:
            out.append(("+".join(tags), i - j + 1))
    return out


def opcode_changes(a: list[str], b: list[str]) -> str:
    from collections import Counter
    ca, cb = Counter(map(opcode, a)), Counter(map(opcode, b))
    return ", ".join(f"{op} {ca[op]} -> {cb[op]}" for op in sorted(set(ca) | set(cb)) if ca[op] != cb[op])


def demangle(names: list[str]) -> dict[str, str]:
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    mangled = [MANGLED.get(n, n) for n in names]
    out = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True)
    pretty = out.stdout.splitlines()
    return dict(zip(names, pretty)) if len(pretty) == len(names) else {n: n for n in names}


def family(pretty: str) -> str:
    m = re.search(r"(sm\d+_\w+?)(?:<|\()", pretty) or re.search(r"::(\w+?)(?:<|\()", pretty)
    return m.group(1) if m else pretty


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--filter", default="", help="only kernels whose demangled name contains this")
    p.add_argument("--diff", type=int, default=0, metavar="N", help="print N lines of diff per differing kernel")
    p.add_argument("--dump", metavar="DIR", help="write the normalized listings to DIR/old and DIR/new")
    p.add_argument("--cuobjdump", help="path of cuobjdump")
    p.add_argument("--quiet", action="store_true", help="only differing kernels and the summary")
    p.add_argument("--skeleton", action="store_true",
                   help="for each differing kernel, also compare its skeleton: the sequence of tensor-core, memory, "
                        "barrier and synchronization instructions with register names dropped")
    p.add_argument("--loops", action="store_true",
                   help="for each differing kernel, the size in instructions of every loop that issues tensor-core "
                        "ops, TMA or shared-memory stores (the hot loops), in both builds")
    p.add_argument("--opcodes", action="store_true",
                   help="for each differing kernel, the opcodes whose count changed (e.g. IMAD 12 -> 11)")
    args = p.parse_args()
    for lib in (args.old, args.new):
        if not Path(lib).is_file():
            print(f"compare_sass: {lib} does not exist", file=sys.stderr)
            return 2
    tool = find_cuobjdump(args.cuobjdump)
    old, new = sass_by_kernel(tool, args.old), sass_by_kernel(tool, args.new)
    old_regs, new_regs = registers_by_kernel(tool, args.old), registers_by_kernel(tool, args.new)
    keys = list(old) + [k for k in new if k not in old]
    pretty = demangle(sorted({k[1] for k in keys}))
    keys = [k for k in keys if args.filter in pretty[k[1]]]
    keys.sort(key=lambda k: (family(pretty[k[1]]), k[0], pretty[k[1]]))

    summary: "OrderedDict[str, list[int]]" = OrderedDict()  # family -> [identical, differing, missing]
    status = 0
    for key in keys:
        arch, name = key
        fam = f"{family(pretty[name])} ({arch})"
        counts = summary.setdefault(fam, [0, 0, 0])
        label = f"{arch} {pretty[name]}"
        regs = f"REG {old_regs.get(key, '?')} -> {new_regs.get(key, '?')}"
        if key not in old or key not in new:
            counts[2] += 1
            status = 1
            print(f"ONLY IN {'NEW' if key not in old else 'OLD'}: {label}")
            continue
        a, b = old[key], new[key]
        if args.dump:
            for side, lines in (("old", a), ("new", b)):
                d = Path(args.dump) / side
                d.mkdir(parents=True, exist_ok=True)
                safe = re.sub(r"[^\w.-]", "_", name)[:200]
                (d / f"{arch}_{safe}.sass").write_text("\n".join(lines) + "\n")
        if a == b and old_regs.get(key) == new_regs.get(key):
            counts[0] += 1
            if not args.quiet:
                print(f"identical ({len(a)} instructions, {regs}): {label}")
            continue
        counts[1] += 1
        status = 1
        diff = list(difflib.unified_diff(a, b, "old", "new", n=2, lineterm=""))
        added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
        removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
        print(f"DIFFERS ({len(a)} -> {len(b)} instructions, -{removed} +{added} lines, {regs}): {label}")
        if args.skeleton:
            sa, sb = skeleton(a), skeleton(b)
            if sa == sb:
                print(f"    skeleton: identical ({len(sa)} instructions)")
            else:
                sd = [d for d in difflib.unified_diff(sa, sb, "old", "new", n=1, lineterm="")]
                print(f"    skeleton: DIFFERS ({len(sa)} -> {len(sb)} instructions)")
                for line in sd[: max(args.diff, 20)]:
                    print("      " + line)
        if args.loops:
            la, lb = hot_loops(a), hot_loops(b)
            same = "same sizes" if [x[1] for x in la] == [x[1] for x in lb] else "sizes differ"
            print(f"    hot loops ({same}): " + ", ".join(
                f"{tag} {x} -> {y}" for (tag, x), (_, y) in zip(la, lb)) + ("" if len(la) == len(lb) else
                f"; loop count {len(la)} -> {len(lb)}"))
        if args.opcodes:
            print("    opcodes: " + (opcode_changes(a, b) or "same counts (order or operands differ)"))
        for line in diff[: args.diff]:
            print("    " + line)

    print("\nsummary (kernels: identical / differing / in one build only):")
    for fam, (same, differ, missing) in summary.items():
        print(f"  {fam}: {same} / {differ} / {missing}")
    if not keys:
        print("  no kernels matched")
        return 2
    return status


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    sys.exit(main())
