#!/usr/bin/env python3
"""Draws ifa-bench results: achieved GB/s against KV bytes, the device's streaming-read bandwidth as a line,
and the peer's GB/s on the same rows (from the peer time in the CSV). NumPy and Matplotlib from Debian
(python3-numpy, python3-matplotlib; `scripts/deps` installs them).

usage: tools/plot_bench.py RESULTS.csv OUT.png [--title TEXT] [--peer-label NAME]
--peer-label: the legend's name for the peer rows (e.g. "PyTorch SDPA", "ggml"; default: the name of the peers'
file the JSON beside the CSV names (OUT.json, which ifa-bench writes with OUT.csv), else "peer"). Peer times
measured on another device than the run's (rows noted "peer-elsewhere") say that device in the legend. Each point
is labelled with its shape (B,N,N_kv,D,S_kv); the title wraps to the figure.
"""
import argparse
import csv
import json
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debian_python import rerun_if_missing  # noqa: E402

rerun_if_missing("numpy", "matplotlib")
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def load(path):
    """The rows of ifa-bench's CSV and, from the JSON beside it (OUT.json), its device and peers' file; a CSV
    written with "# device:" and "# peers:" comment lines above its header reads too."""
    device, peers, peers_device, rows = "", "", "", []
    with open(path, newline="") as f:
        lines = [l for l in f if l.strip()]
    for l in lines:
        if l.startswith("# device:"):
            device = l[len("# device:"):].strip()
        if l.startswith("# peers:"):
            peers = os.path.splitext(os.path.basename(l[len("# peers:"):].strip()))[0]
    side = (path[:-4] if path.endswith(".csv") else path) + ".json"
    if os.path.exists(side):
        with open(side) as f:
            meta = json.load(f)
        device = "%s; bandwidth %.1f GB/s; %s" % (meta.get("device", ""), meta.get("bandwidth_GBps", 0),
                                                   meta.get("date", ""))
        if meta.get("peers"):
            peers = os.path.splitext(os.path.basename(meta["peers"]))[0]
            peers_device = meta.get("peers_device") or "a device it does not name"
    body = [l for l in lines if not l.startswith("#")]
    for r in csv.DictReader(body):
        if r.get("us"):
            rows.append(r)
    return device, peers, peers_device, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    ap.add_argument("--peer-label", default="")
    a = ap.parse_args()
    device, peers, peers_device, rows = load(a.csv)
    if not rows:
        sys.exit("no measured rows in " + a.csv)
    mb = np.array([float(r["kv_MB"]) for r in rows])
    gbps = np.array([float(r["GBps"]) for r in rows])
    bw = float(rows[0]["bw_GBps"])
    peer = np.array([float(r["kv_MB"]) * 1e3 / float(r["peer_us"]) if r.get("peer_us") else np.nan for r in rows])
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.scatter(mb, gbps, label="ifa", color="tab:blue", zorder=3)
    for r, x, y in zip(rows, mb, gbps):
        ax.annotate(",".join(r[k] for k in ("B", "N", "N_kv", "D", "S_kv")), (x, y), textcoords="offset points",
                    xytext=(4, 3), fontsize=6, color="tab:blue")
    if np.isfinite(peer).any():
        label = a.peer_label or peers or "peer"
        if any("peer-elsewhere" in (r.get("note") or "") for r in rows):
            label += " (measured on %s)" % (peers_device or "another device")
        ax.scatter(mb, peer, label=label, marker="x", color="tab:red", zorder=3)
    ax.axhline(bw, color="gray", linestyle="--", label="streaming read %.0f GB/s" % bw)
    ax.set_xscale("log")
    ax.set_xlabel("K + V bytes (MB)")
    ax.set_ylabel("achieved GB/s (K + V bytes / device time)")
    ax.set_title("\n".join(textwrap.wrap(a.title or device, 80)), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
