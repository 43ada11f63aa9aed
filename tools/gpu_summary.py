#!/usr/bin/env python3
"""Reads the CSVs (and the log) that scripts/gpu-measure writes into its output folder and prints, as Markdown,
what each measurement says: the H100 targets (per row and in total, and against PyTorch timed on
the lent card itself when same_card_sdpa.csv is there), part mma's verdicts on each matrix-shape variant
(correct on the card, registers, int8 and bf16 in the shape), part tune's settings, the load widths in part ptx's
PTX, the template winners
with the cv_min_rows that would make the planner's rule pick every winner, partial against global
rowmax with the split_rowmax to set, the decode runs (from the log), the NVIDIA row's work-group/chunk
grid, part d256's split sizes, part ab's kernels before and after a change, part int8's depth of int8 rows in
flight (mma_int8 2 against 1, and the checked int8 rows under mma 6), the latent-attention rows, the
uneven-length rows and the paged rows. A lent GPU is held for 30 minutes at most; this turns its files into
the numbers docs/ and the tuning table need without hand arithmetic. Standard library only.

    tools/gpu_summary.py DIR [--device NAME] [--date YYYY-MM-DD]
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import tarfile


def read_rows(d, name):
    """The data rows of ifa-bench CSV d/name (comment lines skipped) as dicts, or None when the file is absent."""
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def section(out, d, title, name):
    """Starts a section titled title and returns the rows of its one CSV d/name, or None (saying so) without it."""
    out.append("## " + title)
    rows = read_rows(d, name)
    if not rows:
        out.append("not measured: no " + name)
    return rows


def num(row, key):
    try:
        return float(row.get(key, ""))
    except ValueError:
        return math.nan


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def shape(row):
    return "%s,%s,%s,%s,%s" % (row["B"], row["N"], row["N_kv"], row["D"], row["S_kv"])


PEER_ROWS = 11  # rows of docs/bench/peers/h100_pytorch_sdpa_decode.csv (the H100 peer table)


def h100_targets(d, out):
    out.append("## The H100 targets")
    runs = {name: read_rows(d, "h100_peers_%s.csv" % name)
            for name in ("vl0", "vl1", "best", "final", "int8", "int8_best", "int8_mma6", "int8_q_local", "fp8",
                         "e5m2")}
    fp16 = [r for r in (runs["vl0"], runs["vl1"], runs["best"], runs["final"]) if r]
    if not fp16:
        out.append("not measured: no h100_peers_vl0.csv, h100_peers_vl1.csv, h100_peers_best.csv or "
                   "h100_peers_final.csv")
        return
    # per shape, the better of the two load widths (which one the tuning row should take is the next table)
    best = {}
    for rows in fp16:
        for r in rows:
            k = shape(r)
            if k not in best or num(r, "us") < num(best[k], "us"):
                best[k] = r
    # tail: device time after the first kernel (a split plan's combine and the gap before it; CSVs before
    # 2026-11-26's Zen 4, 2026-11-26 lack the column)
    out.append("| shape | us | tail us | splits | peer us | speedup | % of read bw | KV MB | check |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for k, r in best.items():
        out.append("| %s | %.1f | %s | %s | %.1f | %.2fx | %.0f %% | %.1f | %s |" % (
            k, num(r, "us"), r.get("tail_us") or "-", r.get("splits", "-"), num(r, "peer_us"), num(r, "speedup"),
            num(r, "pct_bw"), num(r, "kv_MB"), r.get("check", "")))
    speedups = [num(r, "speedup") for r in best.values()]
    faster = sum(1 for s in speedups if s > 1)
    g = geomean(speedups)
    out.append("")
    # a step stopped at its time limit leaves fewer rows than the peer file's: say how many were run
    not_run = PEER_ROWS - len(speedups)
    out.append("- rows measured: %d of the peer file's %d" % (len(speedups), PEER_ROWS))
    out.append("- faster than the peer on %d of %d rows (target: all) -> %s" %
               (faster, len(speedups), "missed" if faster < len(speedups) else
                "met on the rows run, %d not run" % not_run if not_run > 0 else "met"))
    out.append("- geometric mean speedup %.2fx (target >= 1.3x) -> %s" % (g, "met" if g >= 1.3 else "missed"))
    big = [r for r in best.values() if num(r, "kv_MB") >= 128]
    low = [shape(r) for r in big if num(r, "pct_bw") < 90]
    out.append("- >= 90 %% of the read bandwidth on the %d rows with >= 128 MB of KV -> %s" %
               (len(big), "met" if big and not low else "missed on " + ", ".join(low) if low else "no such row"))
    # "skipped": a --no-check run (quick, best, final), which the tests and checked parts stand for
    failed = [shape(r) for rows in runs.values() if rows for r in rows
              if r.get("check") not in ("pass", "", "skipped")]
    unchecked = sum(1 for rows in runs.values() if rows for r in rows if r.get("check") == "skipped")
    out.append("- every row checked against float64: %s%s" % (
        "yes" if not failed else "FAILED on " + ", ".join(failed),
        " (%d rows run unchecked)" % unchecked if unchecked else ""))
    for name in ("vl0", "vl1"):
        if runs[name]:
            out.append("- load width %s: geomean speedup %.2fx" % (name, geomean(num(r, "speedup") for r in runs[name])))
    b1 = read_rows(d, "h100_b1_8k.csv")
    if b1:
        t = num(b1[0], "us")
        out.append("- B = 1, 8192 tokens: %.1f us (target <= 20 us) -> %s" % (t, "met" if t <= 20 else "missed"))
    int8 = {}
    for rows in (runs["int8"], runs["int8_best"], runs["int8_mma6"], runs["int8_q_local"]):
        for r in rows or []:
            if shape(r) not in int8 or num(r, "us") < num(int8[shape(r)], "us"):
                int8[shape(r)] = r
    if int8:
        ratios = []
        for k, r in int8.items():
            if k in best and num(best[k], "kv_MB") >= 128:
                ratios.append((k, num(best[k], "us") / num(r, "us")))
        if ratios:
            worst = min(x for _, x in ratios)
            out.append("- int8 over fp16 on the >= 128 MB rows: %s (target >= 1.7x) -> %s" %
                       (", ".join("%s %.2fx" % kv for kv in ratios), "met" if worst >= 1.7 else "missed"))
    for name in ("fp8", "e5m2"):
        if runs[name]:
            out.append("- %s KV: geomean speedup over the fp16 peer %.2fx" %
                       (name, geomean(num(r, "speedup") for r in runs[name])))
    same_card(d, best, out)


def same_card(d, best, out):
    """The fp16 rows against same_card_sdpa.csv (tools/sdpa_peer.py: PyTorch timed on the lent card itself,
    which need not be the peer file's H100)."""
    rows = read_rows(d, "same_card_sdpa.csv")
    if not rows:
        return
    with open(os.path.join(d, "same_card_sdpa.csv")) as f:
        first = f.readline()
    # "# PyTorch V scaled_dot_product_attention, decode (query length 1), fp16 Q/K/V, CARD, CUDA events, ..."
    parts = first.split(", ") if first.startswith("#") else []
    card = parts[3] if len(parts) > 3 else ""
    ratios = []
    for r in rows:
        k = shape(r)
        if k in best and num(r, "us") > 0:
            ratios.append((k, num(r, "us") / num(best[k], "us"), r.get("best_backend", "")))
    if not ratios:
        return
    faster = sum(1 for _, x, _ in ratios if x > 1)
    out.append("- against PyTorch SDPA timed on the same card (%s): faster on %d of %d rows, geomean %.2fx "
               "(%s)" % (card or "same_card_sdpa.csv", faster, len(ratios), geomean(x for _, x, _ in ratios),
                         ", ".join("%s %.2fx %s" % r for r in ratios)))


def tune(d, out):
    """scripts/gpu-measure tune: each setting's geometric mean over the shapes every setting ran."""
    rows = section(out, d, "The work-group shape's settings (part tune)", "h100_tune.csv")
    if not rows:
        return
    by = {}
    for r in rows:
        by.setdefault(r["setting"], {})[shape(r)] = num(r, "us")
    common = set.intersection(*(set(v) for v in by.values()))
    if not common:
        out.append("no shape ran in every setting")
        return
    g = {s: geomean(v[k] for k in common) for s, v in by.items()}
    first = next(iter(g.values()))
    out.append("| setting | geomean us over %d shapes | against the first |" % len(common))
    out.append("| --- | --- | --- |")
    for s, x in g.items():
        out.append("| %s | %.1f | %.2fx |" % (s, x, x / first))
    out.append("")
    out.append("- fastest: %s" % min(g, key=g.get))


def proposed_threshold(rows):
    """The smallest G (G x S1 with S1 = 1) from which cv wins every row and below which all_vector wins every
    row, or the threshold that mispredicts the fewest rows when no such G exists. Returns (threshold or 0 for
    never, mispredicted rows)."""
    gs = sorted({int(num(r, "G")) for r in rows})
    candidates = gs + [max(gs) + 1]
    best = None
    for t in candidates:
        wrong = sum(1 for r in rows if (int(num(r, "G")) >= t) != (r["winner"] == "cv"))
        if best is None or wrong < best[1]:
            best = (t, wrong)
    t, wrong = best
    return (0 if t > max(gs) else t), wrong


def template_rule(d, out):
    rows = section(out, d, "The template rule", "h100_templates.csv")
    if not rows:
        return
    out.append("| shape | G | all_vector us | cv us | winner | by | planner | right |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        out.append("| %s | %s | %.1f | %.1f | %s | %.2fx | %s | %s |" % (shape(r), r["G"], num(r, "all_vector_us"),
                   num(r, "cv_us"), r["winner"], num(r, "by"), r["planner"], r["planner_right"]))
    right = sum(1 for r in rows if r["planner_right"] == "yes")
    t, wrong = proposed_threshold(rows)
    out.append("")
    out.append("- the planner chose the winner on %d of %d rows" % (right, len(rows)))
    if t == 0:
        out.append("- proposed cv_min_rows = 0 (all_vector wins %s): keep the NVIDIA row's 0" %
                   ("every row" if wrong == 0 else "all but %d rows" % wrong))
    else:
        out.append("- proposed cv_min_rows = %d (G x S1 from which cv wins; %s)" %
                   (t, "matches every row" if wrong == 0 else "mispredicts %d rows" % wrong))
    failed = [shape(r) for r in rows if r.get("check") != "pass"]
    if failed:
        out.append("- check FAILED on " + ", ".join(failed))


def rowmax(d, out):
    out.append("## Partial against global rowmax")
    a, b = (read_rows(d, "h100_rowmax%d.csv" % m) for m in (1, 2))
    if not a or not b:
        out.append("not measured: h100_rowmax1.csv and h100_rowmax2.csv are both needed")
        return
    glob = {shape(r): r for r in b}
    out.append("| shape | partial us | global us | global / partial | splits |")
    out.append("| --- | --- | --- | --- | --- |")
    ratios = []
    for r in a:
        k = shape(r)
        if k not in glob:
            continue
        ratio = num(glob[k], "us") / num(r, "us")
        ratios.append(ratio)
        out.append("| %s | %.1f | %.1f | %.3f | %s / %s |" % (k, num(r, "us"), num(glob[k], "us"), ratio,
                   r.get("splits", ""), glob[k].get("splits", "")))
    g = geomean(ratios)
    out.append("")
    out.append("- global / partial, geometric mean %.3f -> proposed split_rowmax = %d (%s is faster)" %
               (g, 2 if g < 1 else 1, "global" if g < 1 else "partial"))


def grid(d, out):
    rows = section(out, d, "The NVIDIA row's grid (work_group_size, chunk_rows, vector_loads)", "h100_grid.csv")
    if not rows:
        return
    by_setting, by_shape = {}, {}
    for r in rows:
        by_setting.setdefault(r["setting"], {})[shape(r)] = num(r, "us")
        by_shape.setdefault(shape(r), []).append((num(r, "us"), r["setting"]))
    for k, v in by_shape.items():
        t, s = min(v)
        out.append("- %s: best %s at %.1f us" % (k, s, t))
    shapes = list(by_shape)
    # the setting with the lowest geometric mean time relative to each shape's best
    scores = []
    for s, times in by_setting.items():
        if all(k in times for k in shapes):
            scores.append((geomean(times[k] / min(v for v, _ in by_shape[k]) for k in shapes), s))
    if scores:
        score, s = min(scores)
        wg, chunk, vl = s.split("_")
        out.append("- overall: %s, %.3fx the per-shape best in geometric mean -> NVIDIA row work_group_size %s, "
                   "chunk_rows %s, vector_loads %s" % (s, score, wg, chunk, vl))


def log_sections(d):
    """{step name: (exit status or None, its output lines)} from gpu-measure.log, or None when it is absent."""
    path = os.path.join(d, "gpu-measure.log")
    if not os.path.exists(path):
        return None
    sections, name = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== ") and ": " in line:
                step, rest = line[3:].split(": ", 1)
                if rest.startswith("exit "):
                    sections.setdefault(step, [None, []])[0] = rest[5:]
                    name = None
                else:
                    sections[step] = [None, []]
                    name = step
            elif name:
                sections[name][1].append(line)
    return sections


def exit_code(status):
    """The exit code at the head of a log step's status ("0 after 12 s"), or None when the step did not end."""
    m = re.match(r"\s*(-?\d+)", status or "")
    return int(m.group(1)) if m else None


def checked_rows(lines):
    """(passed, failed): the checked ifa-bench rows among a log step's lines."""
    return sum(1 for l in lines if ",pass," in l), sum(1 for l in lines if ",FAIL," in l)


def mma_more(d):
    """mma_more.csv (blocks of ifa-bench CSV after "# mma=..., mma_int8/mma_bf16=M, kv KV" lines): for each KV type
    with both blocks, (kv, geomean of the lane shape's us over the matrix shape's, shapes compared)."""
    path = os.path.join(d, "mma_more.csv")
    if not os.path.exists(path):
        return []
    blocks, key = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"# mma.*mma_int8/mma_bf16=(\d+), kv (\w+)", line)
            if m:
                key = (m.group(2), int(m.group(1)))
                blocks[key] = []
            elif key and line.strip() and not line.startswith("#"):
                blocks[key].append(line)
    result = []
    for kv in sorted({k for k, _ in blocks}):
        if (kv, 0) not in blocks or (kv, 1) not in blocks:
            continue
        lane, matrix = ({shape(r): num(r, "us") for r in csv.DictReader(blocks[(kv, m)])} for m in (0, 1))
        common = [k for k in lane if k in matrix and lane[k] > 0 and matrix[k] > 0]
        if common:
            result.append((kv, geomean(lane[k] / matrix[k] for k in common), len(common)))
    return result


def variants(d, name, kv_type=None):
    """ifa-bench --variant rows in d/name (those of kv_type only, if given): per shape, [(tuning, median us,
    vs_first, tail us or nan)] in the file's order."""
    result = {}
    for r in read_rows(d, name) or []:
        if kv_type is not None and r.get("kv_type") != kv_type:
            continue
        if r.get("tuning") is not None and r.get("median_us"):
            result.setdefault(shape(r), []).append((r["tuning"], num(r, "median_us"), num(r, "vs_first"),
                                                    num(r, "tail_us")))
    return result


def variant_lines(out, what, name, found):
    """A line per shape of found (variants()): each variant's time against the first's, and the fastest."""
    for sh, vs in sorted(found.items()):
        fastest = min(vs, key=lambda v: v[1] if math.isfinite(v[1]) else math.inf)
        out.append("- %s, %s (%s, alternating rounds): %s; fastest: %s" % (
            what, sh, name, ", ".join("%s %.1f us (%.2fx the first's time%s)" % (
                v[:3] + ((", tail %.1f us" % v[3]) if math.isfinite(v[3]) else "",)) for v in vs), fastest[0]))


def mma(d, out):
    """scripts/gpu-measure mma: each matrix-shape variant's correctness on the card (test_kernel's exit status, the
    checked ifa-bench rows), its kernels' registers (ptxas's lines in the build log), int8/bf16 K/V in the
    shape against the lane shape (mma_more.csv), G = 16 in two transposed groups against mma 1 (mma_g16.csv) and
    the combine's work-group sizes on the B = 1 rows (combine_wg.csv)."""
    out.append("## The matrix shapes (part mma)")
    sections = log_sections(d) or {}
    steps = {k: v for k, v in sections.items() if re.match(r"mma\d_", k)}
    more, g16, cwg = mma_more(d), variants(d, "mma_g16.csv"), variants(d, "combine_wg.csv")
    if not steps and not more and not g16 and not cwg:
        out.append("not measured: no mma step in gpu-measure.log and no mma_more.csv")
        return
    for m in sorted({k[3] for k in steps}):
        parts = []
        tk = steps.get("mma%s_test_kernel" % m)
        if tk:
            code = exit_code(tk[0])
            parts.append("test_kernel %s" % ("passed" if code == 0 else "FAILED (exit %s)" % code if code is not None
                                             else "did not end"))
        checked = [(k, v) for k, v in sorted(steps.items()) if k.startswith("mma%s_" % m) and "checked" in k]
        if checked:
            ok, bad = checked_rows([l for _, (_, lines) in checked for l in lines])
            ended = [k for k, (st, _) in checked if exit_code(st) != 0]
            parts.append("checked rows: %d passed, %d failed%s" % (ok, bad, "; steps not ending in 0: " +
                                                                      ", ".join(ended) if ended else ""))
        regs = steps.get("mma%s_regs" % m)
        if regs:
            counts = [x for l in regs[1] for x in re.findall(r"Used (\d+) registers", l)]
            parts.append("registers %s" % (", ".join(counts) if counts else "(no ptxas line)"))
        out.append("- mma %s: %s" % (m, "; ".join(parts)))
    for kv, ratio, n in more:
        out.append("- %s K/V in the matrix shape (mma_more.csv): %.2fx the lane shape's speed in geometric mean over %d "
                   "shapes" % (kv, ratio, n))
    checked = sections.get("mma_g16_checked")
    if checked:
        ok, bad = checked_rows(checked[1])
        out.append("- G = 16 in two transposed groups (mma=5,mma_group_rows=8), checked rows: %d passed, %d failed%s"
                   % (ok, bad, "" if exit_code(checked[0]) == 0 else "; the step did not end in 0"))
    variant_lines(out, "G = 16", "mma_g16.csv", g16)
    variant_lines(out, "the combine's work-group", "combine_wg.csv", cwg)


def decode_loop(d, out):
    out.append("## The decode loop (64 slots, 4K-32K contexts)")
    sections = log_sections(d)
    runs = {k: v for k, v in (sections or {}).items() if k.startswith("decode_")}
    if not runs:
        out.append("not measured: no decode step in gpu-measure.log")
        return
    for name, (status, lines) in sorted(runs.items()):
        pick = [l for l in lines if l.split("  ")[0].strip() in ("tokens generated", "step latency", "KV read per step",
                                                                 "steps", "blocks in use", "requests finished",
                                                                 "device time", "speculative steps")]
        out.append("- %s (exit %s):" % (name, status if status is not None else "?"))
        out.extend("  - " + " ".join(l.split()) for l in pick)


def split_size(r):
    """One d256 variant row as 'N splits T us (main M us for R rows a split, G GB/s)'."""
    splits, tail, us = num(r, "splits"), num(r, "tail_us"), num(r, "median_us")
    n = max(int(splits), 1) if math.isfinite(splits) else 1
    return "%d splits %.1f us (main %.1f us for %d rows a split, %.0f GB/s)" % (
        n, us, us - (tail if math.isfinite(tail) else 0.0), -(-int(r["S_kv"]) // n), num(r, "GBps"))


def d256(d, out):
    """Part d256: per shape and kernel shape, each split size's time, its main kernel (the time less the tail) and
    the rows a split holds: a main kernel that hardly moves as the rows a split halve is a cost per work-group, one
    that halves with them a cost per row."""
    out.append("## D = 256: split sizes (part d256)")
    found = False
    for m, what in (("5", "matrix shape (mma 5)"), ("0", "lane shape (mma 0)")):
        by = {}
        for r in read_rows(d, "d256_mma%s.csv" % m) or []:
            by.setdefault(shape(r), []).append(r)
        for sh, rs in by.items():
            found = True
            best = min(rs, key=lambda r: num(r, "median_us") if math.isfinite(num(r, "median_us")) else math.inf)
            out.append("- %s, %s: %s; fastest: %s" % (sh, what, ", ".join(split_size(r) for r in rs), best["tuning"]))
    if not found:
        out.append("not measured: no d256_mma5.csv or d256_mma0.csv")


def ab(d, out):
    """Part ab: the kernels of a change against those before them (IFA_KERNEL_DIR), per
    shape and K/V type: each side's median over its rounds and the time after over the time before."""
    rows = section(out, d, "Kernel changes against the kernels before them (part ab)", "h100_ab.csv")
    if not rows:
        return
    by = {}
    for r in rows:
        by.setdefault((shape(r), r.get("kv", "")), {}).setdefault(r.get("kernels", ""), []).append(num(r, "us"))
    ratios = []
    for (sh, kv), sides in by.items():
        before, after = sides.get("before"), sides.get("after")
        if not before or not after:
            out.append("- %s %s: one side missing" % (sh, kv))
            continue
        mb, ma = finite_median(before), finite_median(after)
        ratios.append(ma / mb)
        out.append("- %s %s: before %.1f us, after %.1f us: %.2fx the time (%d and %d rounds)" % (
            sh, kv, mb, ma, ma / mb, len(before), len(after)))
    if ratios:
        out.append("- geometric mean: %.3fx the time over %d rows" % (geomean(ratios), len(ratios)))


def finite_median(values):
    v = [x for x in values if math.isfinite(x)]
    return statistics.median(v) if v else math.nan


def int8_depth(d, out):
    """Part int8: int8 K/V's rows two steps ahead (mma_int8=2, plan mma 6) against one (mma_int8=1), per shape in
    alternating rounds, and the geometric mean of the time ratio (below 1: two steps ahead is faster)."""
    out.append("## int8 rows two steps ahead (part int8)")
    found = variants(d, "h100_int8_depth.csv")
    if not found:
        out.append("not measured: no h100_int8_depth.csv")
        return
    variant_lines(out, "int8", "h100_int8_depth.csv", found)
    ratios = [vs[1][2] for vs in found.values() if len(vs) > 1 and math.isfinite(vs[1][2])]
    if ratios:
        g = geomean(ratios)
        out.append("- mma_int8=2 against mma_int8=1: %.3fx the time in geometric mean over %d shapes -> %s" %
                   (g, len(ratios), "set mma_int8 2 in the NVIDIA row" if g < 0.98 else "keep mma_int8 1"))


def narrow_mma(d, out):
    """Parts float8 and int4: each type's checks on the card (the feature cases' step in the log, the checked peer
    rows), its matrix shape (mma_X=1, =2) against the work-group shape (mma_X=0) per shape in alternating rounds,
    and the verdict for the NVIDIA row's column: on where the checks passed and one step in flight is faster; then
    parts narrow and bytes, each variant against the first per shape."""
    out.append("## float8 and int4 K/V in the matrix shapes (parts float8, int4, narrow, bytes)")
    sections = log_sections(d) or {}
    found_any = False
    for column, types, test_step, checked in (
            ("mma_float8", ("float8_e4m3fn", "float8_e5m2"), "float8_tests", "h100_peers_e4m3_mma.csv"),
            ("mma_int4", ("int4",), "int4_tests", "h100_peers_int4_mma.csv")):
        ratios, two = [], []
        for t in types:
            name = "h100_%s_mma.csv" % t
            found = variants(d, name)
            if not found:
                continue
            found_any = True
            for vs in found.values():
                if len(vs) > 1 and math.isfinite(vs[1][2]):
                    ratios.append(vs[1][2])
                if len(vs) > 2 and math.isfinite(vs[2][2]) and math.isfinite(vs[1][1]) and vs[1][1] > 0:
                    two.append(vs[2][1] / vs[1][1])
            g = geomean([vs[1][2] for vs in found.values() if len(vs) > 1])
            out.append("- %s: %s=1 %.3fx the work-group shape's time in geometric mean over %d shapes" % (
                t, column, g, len(found)))
        step = sections.get(test_step)
        code = exit_code(step[0]) if step else None
        tests = ("not run" if not step else "passed" if code == 0 else
                 "did not finish" if code in (None, 124) else "FAILED (exit %s)" % code)
        rows = read_rows(d, checked) or []
        passed = sum(1 for r in rows if r.get("check") == "pass")
        failed = sum(1 for r in rows if r.get("check") not in ("pass", "skipped", None, ""))
        if not ratios and not step and not rows:
            continue
        found_any = True
        out.append("- %s: feature cases on the card %s; checked rows (%s): %d passed, %d failed" % (
            column, tests, checked, passed, failed))
        if two:
            out.append("- %s=2 against 1: %.3fx the time in geometric mean over %d shapes" % (
                column, geomean(two), len(two)))
        ok = tests == "passed" and passed > 0 and failed == 0
        fast = bool(ratios) and geomean(ratios) < 0.98
        out.append("- %s -> %s" % (column, "set %s 1 in the NVIDIA row" % column if ok and fast else
                                   "keep it off: the checks on the card are incomplete" if fast else
                                   "keep it off"))
    # part narrow (mma 5 against mma 3, the query's words in local memory) and part float8's conversion instruction
    # and part bytes (the one-byte conversions by byte permutes against the kernels before them, and fp16 D = 256's
    # query words under mma_q_local: one file, each K/V type's rows)
    for t, name in [(t, "h100_narrow_%s.csv" % t) for t in ("int8", "float8_e4m3fn", "float8_e5m2", "int4")] + [
            ("float8_e4m3fn", "h100_float8_e4m3fn_cvt.csv")] + [
            (t, "h100_bytes.csv") for t in ("int8", "float8_e4m3fn", "float8_e5m2", "int4", "float16")]:
        found = variants(d, name, t if name == "h100_bytes.csv" else None)
        if not found:
            continue
        found_any = True
        variant_lines(out, t, name, found)
        names = [v[0] for v in next(iter(found.values()))]
        for i, n in enumerate(names[1:], 1):
            g = geomean([vs[i][2] for vs in found.values() if len(vs) > i])
            verdict = ""
            if name == "h100_bytes.csv" and n.startswith("kernels=") and math.isfinite(g):
                # the working tree's kernel changes against the kernels before them: within 2 % is level
                verdict = (" -> keep the changes" if g < 0.98 else " -> level: keep them (fewer instructions)"
                           if g <= 1.02 else " -> slower: revert the kernel commits after them for this type, one by "
                           "one (tools/sass_hist.py --core guiding)")
            out.append("- %s: %s %.3fx the time of %s in geometric mean over %d shapes%s" % (
                t, n, g, names[0], len(found), verdict))
    if not found_any:
        out.append("not measured: no h100_float8_*_mma.csv, h100_int4_mma.csv, h100_narrow_*.csv, h100_bytes.csv or their steps in "
                   "gpu-measure.log")


SPREAD = 0.02  # taken as the card's round-to-round noise in one kernel's median over alternating rounds


def new_against_old(d, out, title, name, keep, old):
    """A change that is on by default, timed on the card against what ran before it (the file's first variant the
    change, the second the old form), per K/V type and shape, checked on the card: keep it (the verdict keep)
    unless a row failed its check or the old form (old, in words) ran faster by more than the card's round-to-round
    spread (SPREAD)."""
    out.append(title)
    rows = read_rows(d, name)
    if not rows:
        out.append("not measured: no %s" % name)
        return
    failed = sorted({"%s %s" % (r.get("kv_type"), shape(r)) for r in rows if r.get("check") not in ("pass", "skipped")})
    slower = []
    for t in sorted({r.get("kv_type") for r in rows}):
        found = variants(d, name, t)
        variant_lines(out, t, name, found)
        for sh, vs in found.items():
            if len(vs) > 1 and math.isfinite(vs[1][2]) and vs[1][2] < 1.0 - SPREAD:
                slower.append("%s %s" % (t, sh))
    out.append("- checks: %s" % ("every row passed" if not failed else "FAILED: " + ", ".join(failed)))
    out.append("- verdict: %s" % (
        keep if not failed and not slower else
        "look again: %s" % ", ".join(
            (["failed " + ", ".join(failed)] if failed else []) +
            (["%s faster by more than %d %% at %s" % (old, round(100 * SPREAD), ", ".join(slower))] if slower
             else []))))


def lanekv(d, out):
    """Part lanekv: the lane shape's K/V types and head dims of 2026-11-29 (the planner's plan, first)
    against the work-group shape they ran before (lanes=0)."""
    new_against_old(d, out, "## The lane shape's K/V types and head dims (part lanekv)", "h100_lanekv.csv",
                    "keep the lane shape for them", "the work-group shape")


def gexp(d, out):
    """Part gexp: the 2026-11-29 kernel changes (the GPU shapes' exponentials by the card's exp2 unit,
    e4m3fn's conversion by a byte permute; this tree's kernels, first) against the kernels before them."""
    new_against_old(d, out, "## The exponentials by the exp2 unit and e4m3fn by a permute (part gexp)",
                    "h100_gexp.csv", "keep the changes", "the kernels before them")


def mlatile(d, out):
    """Part mlatile: the latent tile for DeepSeek's MLA (mma_mla=1, first) against the row's lane shape."""
    new_against_old(d, out, "## The latent tile for MLA (part mlatile)", "h100_mlatile.csv",
                    "set mma_mla 1 in the NVIDIA row", "the lane shape")


def fusedbal(d, out):
    """Part fusedbal: balanced units' last piece combining each cut block (fused_balanced=1, first) against the
    combine kernel the NVIDIA row keeps (its default, 0); a third variant at the equal splits' cap, 8192."""
    new_against_old(d, out, "## Balanced units' last piece combines (part fusedbal)", "h100_fusedbal.csv",
                    "set fused_balanced 1 in the NVIDIA row", "the combine kernel")


def bisect(d, out):
    """Part bisect: each staged kernel folder's median per shape and combine form (rounds alternating), and each
    against the first folder's."""
    rows = section(out, d, "Kernels of several commits on the same host code (part bisect)", "h100_bisect.csv")
    if not rows:
        return
    by, order = {}, []
    for r in rows:
        k = r.get("kernels", "")
        if k not in order:
            order.append(k)
        by.setdefault((shape(r), r.get("combine", "")), {}).setdefault(k, []).append(num(r, "us"))
    out.append("| shape | combine | " + " | ".join(order) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in order) + " |")
    for (sh, comb), ks in sorted(by.items()):
        first = finite_median(ks.get(order[0], []))
        cells = []
        for k in order:
            m = finite_median(ks.get(k, []))
            cells.append("-" if not math.isfinite(m) else "%.1f (%.2fx)" % (m, m / first) if math.isfinite(first)
                         else "%.1f" % m)
        out.append("| %s | %s | %s |" % (sh, comb, " | ".join(cells)))


def mla(d, out):
    rows = section(out, d, "Multi-head latent attention", "h100_mla.csv")
    if not rows:
        return
    for r in rows:
        out.append("- %s: all_vector %.1f us, cv %.1f us, %s by %.2fx (planner: %s)" % (shape(r),
                   num(r, "all_vector_us"), num(r, "cv_us"), r["winner"], num(r, "by"), r["planner"]))


def ragged(d, out):
    out.append("## Uneven lengths: balanced units against equal splits")
    found = False
    for case in ("q1", "q4", "random"):
        a, b = (read_rows(d, "h100_ragged_%s_%s.csv" % (m, case)) for m in ("default", "1000000"))
        if not a or not b:
            continue
        found = True
        for ra, rb in zip(a, b):
            out.append("- %s, %s query tokens, mean length %s: planner (%s) %.1f us, equal splits (%s) %.1f us: %.2fx, "
                       "%.0f %% of read bw" % (shape(ra), ra.get("S_q", "?"), ra.get("mean_len", "?"), ra["split_kv"],
                                               num(ra, "us"), rb["split_kv"], num(rb, "us"), num(rb, "us") / num(ra, "us"),
                                               num(ra, "pct_bw")))
    if not found:
        out.append("not measured: no h100_ragged_default_*.csv with its h100_ragged_1000000_*.csv")


def paged(d, out):
    """Paged pools against contiguous K/V of the same layout (BNSD's contiguous rows: h100_peers_vl0.csv, part
    peers), row by row, and against the peer (whose figures are for contiguous K/V)."""
    out.append("## Paged K/V: the peer's shapes from paged pools")
    found = False
    for layout in ("BNSD", "BSND"):
        base = read_rows(d, "h100_peers_vl0.csv" if layout == "BNSD" else "h100_paged_BSND_0.csv")
        for block in (16, 64):
            rows = read_rows(d, "h100_paged_%s_%d.csv" % (layout, block))
            if not rows:
                continue
            found = True
            faster = sum(1 for r in rows if num(r, "speedup") > 1)
            line = "- %s, %d-row blocks: faster than the peer on %d of %d rows, geomean %.2fx" % (
                layout, block, faster, len(rows), geomean([num(r, "speedup") for r in rows]))
            if base:
                by_shape = {shape(r): num(r, "us") for r in base}
                cost = [(num(r, "us") / by_shape[shape(r)], shape(r)) for r in rows if shape(r) in by_shape]
                if cost:
                    worst = max(cost)
                    line += "; against contiguous %s geomean %.2fx the time, at worst %.2fx (%s)" % (
                        layout, geomean([c for c, _ in cost]), worst[0], worst[1])
            out.append(line)
    if not found:
        out.append("not measured: no h100_paged_*.csv")


def ptx(d, out):
    """scripts/gpu-measure ptx: per setting, the global and local-memory loads the attention kernel's PTX holds,
    by width (ld.global.v4.u32 is a 16-byte load; ld.global.u16 one half)."""
    out.append("## What NVIDIA compiled (part ptx)")
    path = os.path.join(d, "ptx.tar.gz")
    if not os.path.exists(path):
        out.append("not measured: no ptx.tar.gz")
        return
    settings, counts = {}, {}
    with tarfile.open(path) as t:
        for m in t.getmembers():
            parts = m.name.strip("./").split("/")
            if not m.isfile() or len(parts) != 2:
                continue
            text = t.extractfile(m).read().decode("utf-8", "replace")
            if parts[1] == "setting":
                settings[parts[0]] = text.strip()
            elif re.match(r"ifa_(all_vector|attention_\w+)-[0-9a-f]+\.bin$", parts[1]):  # the fused kernel's dumps
                c = counts.setdefault(parts[0], {})
                for space, nc, vec, typ in re.findall(r"\bld\.(global|shared)(\.nc)?(?:\.v(\d))?\.(\w+)", text):
                    key = "%s %s%s" % (space, "v%s." % vec if vec else "", typ)
                    c[key] = c.get(key, 0) + 1
    if not counts:
        out.append("ptx.tar.gz holds no fused kernel program")
        return
    for k in sorted(counts):
        loads = ", ".join("%s x%d" % kv for kv in sorted(counts[k].items()))
        out.append("- %s: %s" % (settings.get(k, "setting " + k), loads or "no ld.global/ld.shared"))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="the folder scripts/gpu-measure wrote")
    ap.add_argument("--device", default="NVIDIA H100 (NVIDIA OpenCL)")
    ap.add_argument("--date", default="")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.dir):
        print("gpu_summary: %s is not a folder" % a.dir, file=sys.stderr)
        return 2
    out = ["# GPU measurements: %s%s (from %s)" % (a.device, ", " + a.date if a.date else "", a.dir), ""]
    for part in (h100_targets, mma, tune, ptx, template_rule, rowmax, decode_loop, grid, d256, ab, bisect, int8_depth, narrow_mma, lanekv,
                 gexp, mlatile, fusedbal, mla, ragged, paged):
        part(a.dir, out)
        out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
