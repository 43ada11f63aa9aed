#!/usr/bin/env python3
"""The most any kernel can gain on the 11 H100 rows against PyTorch SDPA (docs/bench/peers), and where ifa's run of
2026-11-27 stands: a row's time is at least its K/V bytes at a read bandwidth plus a fixed cost per call. Two
bounds: the H100 SXM's 3.35 TB/s with no fixed cost (physics), and the best read rate any kernel reached through
NVIDIA's OpenCL on the card (3.08 TB/s: ifa's 32,32,32,128,4096 row; the streaming reference 2.98-3.07) plus the
6.0 us an empty kernel spans in device time (H100, 2026-11-27). Usage: docs/bench/h100_geomean_bound.py
[PEERS.csv] [OURS.csv] (defaults: docs/bench/peers/h100_pytorch_sdpa_decode.csv and the 2026-11-27 run)."""
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def key(r):
    return tuple(int(r[k]) for k in ("B", "N", "N_kv", "D", "S_kv"))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv):
    peers = argv[0] if argv else os.path.join(HERE, "..", "..", "..", "shared", "peers", "h100_pytorch_sdpa_decode.csv")
    ours_path = argv[1] if len(argv) > 1 else os.path.join(HERE, "gpu_h100_2026-11-27_s40_peers_final.csv")
    ours = {key(r): float(r["us"]) for r in rows(ours_path)}
    for bw, fixed_us, name in ((3.35e12, 0.0, "3.35 TB/s, no fixed cost"), (3.08e12, 6.0, "3.08 TB/s + 6 us a call")):
        best, now = [], []
        print("bound: %s" % name)
        for r in rows(peers):
            b, _, nkv, d, s = key(r)
            kv_bytes = b * nkv * s * d * 2 * 2
            floor_us = kv_bytes / bw * 1e6 + fixed_us
            best.append(float(r["us"]) / floor_us)
            now.append(float(r["us"]) / ours[key(r)] if key(r) in ours else math.nan)
            print("  %-20s %7.1f MB  PyTorch %6.1f us  floor %6.1f us  at most %.2fx  measured %.2fx" % (
                ",".join(map(str, key(r))), kv_bytes / 1e6, float(r["us"]), floor_us, best[-1], now[-1]))
        print("  geometric mean: at most %.3fx; measured %.3fx" % (geomean(best), geomean([x for x in now if x == x])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
