#!/usr/bin/env python3
"""The machine instructions of a cubin's kernel counted by opcode, without a disassembler.

scripts/nv-regs (NV_REGS_KEEP=DIR) leaves ptxas's cubin for sm_90a in DIR/k.cubin. Its .text.<kernel> section holds
16-byte instructions whose low 12 bits are the opcode and bits 12-15 the guard predicate (7: none); cuobjdump and
nvdisasm are not installed here, so this counts those fields, naming the opcodes read from a known kernel (below:
each name was matched against a count the source predicts, e.g. 24 HMMA for the fp16 plan's 24 products a step, 32
PRMT after 32 permutes went in; a '?' marks a likelier guess). With two cubins it prints the opcodes whose counts
differ: what a source change did to the code ptxas made.

  tools/sass_hist.py [--kernel NAME] [--core] A.cubin [B.cubin]

--kernel: the kernel whose section is read (default: the first whose name starts with ifa_attention_, the fused
kernel of the cubin's shape).

--core: only the instructions from the first HMMA to the last, the matrix shapes' step (ptxas does not unroll their
step loop, and the step's products are its first and last work): what a step costs, without the prologue's and the
merge's code.
"""
import argparse
import collections
import struct
import subprocess
import sys

# sm_90 opcodes (low 12 bits; the 0x8.. forms take an immediate operand, 0x4.. a constant-bank one)
NAMES = {
    0x202: "MOV", 0x802: "MOV.imm", 0x918: "NOP", 0x947: "BRA", 0x94d: "EXIT?",
    0x210: "IADD3?", 0x810: "IADD3.imm?", 0x211: "LEA?", 0x811: "LEA.imm?", 0x212: "LOP3", 0x812: "LOP3.imm",
    0x216: "PRMT", 0x816: "PRMT.imm", 0x219: "SHF?", 0x819: "SHF.imm?", 0x20c: "ISETP", 0x80c: "ISETP.imm",
    0x224: "IMAD", 0x824: "IMAD.imm", 0x424: "IMAD.const", 0x225: "IMAD.WIDE?", 0x825: "IMAD.WIDE.imm?",
    0x220: "FMUL", 0x820: "FMUL.imm", 0x221: "FADD", 0x821: "FADD.imm", 0x223: "FFMA", 0x823: "FFMA.imm",
    0x423: "FFMA.const", 0x421: "FADD.const", 0x209: "FMNMX?", 0x20b: "FSETP?", 0x80b: "FSETP.imm?", 0x308: "MUFU",
    0x23c: "HMMA", 0x230: "HADD2?", 0x231: "HFMA2?", 0x232: "HMUL2?", 0x981: "LDG", 0x984: "LDS", 0x388: "STS",
    0x986: "STG?", 0x806: "VOTE", 0xf89: "SHFL?", 0x389: "SHFL.reg?", 0xb1d: "BAR?", 0x805: "CS2R?",
}


def instructions(path, kernel):
    """The kernel's instructions as (low, high) 64-bit pairs, from readelf's section table."""
    table = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout
    for line in table.split("\n"):
        fields = line.split()
        if "PROGBITS" in fields and any(f == ".text." + kernel or (kernel.endswith("_") and f.startswith(".text." + kernel))
                                        for f in fields):
            i = fields.index("PROGBITS")
            offset, size = int(fields[i + 2], 16), int(fields[i + 3], 16)
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(size)
            return [struct.unpack("<QQ", data[k:k + 16]) for k in range(0, len(data) - 15, 16)]
    raise SystemExit("sass_hist: no .text.%s in %s" % (kernel, path))


def histogram(ins):
    """Counts per (opcode name, guarded): guarded where the predicate field is not PT (7)."""
    count = collections.Counter()
    for lo, _ in ins:
        op, guard = lo & 0xFFF, (lo >> 12) & 0x7
        count[(NAMES.get(op, "0x%03x" % op), guard != 7)] += 1
    return count


def label(key):
    return ("@P " if key[1] else "") + key[0]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default="ifa_attention_")
    ap.add_argument("--core", action="store_true", help="the first HMMA to the last only")
    ap.add_argument("cubin", nargs="+")
    a = ap.parse_args(argv)
    if len(a.cubin) > 2:
        ap.error("one cubin, or two to compare")
    runs = [instructions(p, a.kernel) for p in a.cubin]
    if a.core:
        cores = []
        for path, ins in zip(a.cubin, runs):
            mma = [i for i, (lo, _) in enumerate(ins) if lo & 0xFFF == 0x23C]
            if not mma:
                raise SystemExit("sass_hist: no HMMA in %s" % path)
            cores.append(ins[mma[0]:mma[-1] + 1])
        runs = cores
    hists = [histogram(r) for r in runs]
    if len(runs) == 1:
        print("%s: %d instructions%s" % (a.cubin[0], len(runs[0]), " (first HMMA to last)" if a.core else ""))
        for key, n in sorted(hists[0].items(), key=lambda kv: (-kv[1], label(kv[0]))):
            print("%6d  %s" % (n, label(key)))
        return 0
    print("%d -> %d instructions%s" % (len(runs[0]), len(runs[1]), " (first HMMA to last)" if a.core else ""))
    keys = sorted(set(hists[0]) | set(hists[1]), key=lambda k: (-(hists[0][k] + hists[1][k]), label(k)))
    for key in keys:
        if hists[0][key] != hists[1][key]:
            print("%6d -> %6d  %+d  %s" % (hists[0][key], hists[1][key], hists[1][key] - hists[0][key], label(key)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # the output cut short by a pager or head: not an error
        sys.stderr.close()
        sys.exit(0)
