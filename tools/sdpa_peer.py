#!/usr/bin/env python3
"""Re-measures the peer (PyTorch's scaled_dot_product_attention, decode: query length 1, fp16) on the machine at
hand, for the shapes of a peers CSV, and writes a CSV in the same format, so that ifa-bench's rows can be set
against a peer timed on the same card the same day (the shared figures are an H100's; a lent machine may be
another). Per shape: each of the flash, efficient and cuDNN backends that accepts the call (grouped query heads
through enable_gqa, else K/V repeated per query head, which the row says), CUDA events around each call, the
median of --runs after --warmup; the best backend's time is the row's. kv_GBps counts K and V once (B*N_kv*S*D*2*2
bytes), as the shared file does. Needs torch with CUDA; nothing else.

    tools/sdpa_peer.py PEERS.csv OUT.csv [--runs 50] [--warmup 10]
"""
import argparse
import csv
import statistics
import sys


def time_call(torch, fn, runs, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)  # ms -> us
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peers")
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with open(a.peers, newline="") as f:
        rows = list(csv.DictReader(line for line in f if line.strip() and not line.startswith("#")))
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION}
    name = torch.cuda.get_device_name(0)
    with open(a.out, "w", newline="") as f:
        f.write("# PyTorch %s scaled_dot_product_attention, decode (query length 1), fp16 Q/K/V, %s, CUDA events, "
                "median of %d after %d warm-ups (tools/sdpa_peer.py). Best of flash, efficient, cudnn per shape.\n"
                % (torch.__version__, name, a.runs, a.warmup))
        f.write("B,N,N_kv,D,S_kv,best_backend,us,kv_GBps,gqa\n")
        for r in rows:
            B, N, Nkv, D, S = (int(r[k]) for k in ("B", "N", "N_kv", "D", "S_kv"))
            q = torch.randn(B, N, 1, D, device="cuda", dtype=torch.float16)
            k = torch.randn(B, Nkv, S, D, device="cuda", dtype=torch.float16)
            v = torch.randn(B, Nkv, S, D, device="cuda", dtype=torch.float16)
            best = None
            for bname, be in backends.items():
                for gqa in ("enable_gqa", "repeat"):
                    try:
                        if gqa == "enable_gqa":
                            def fn():
                                return F.scaled_dot_product_attention(q, k, v, enable_gqa=N != Nkv)
                        else:
                            kr = k.repeat_interleave(N // Nkv, dim=1)
                            vr = v.repeat_interleave(N // Nkv, dim=1)

                            def fn():
                                return F.scaled_dot_product_attention(q, kr, vr)
                        with sdpa_kernel([be]):
                            us = time_call(torch, fn, a.runs, a.warmup)
                    except Exception as e:  # a backend that refuses the shape or form: try the next
                        print("%s %s %s: %s" % (r, bname, gqa, str(e).splitlines()[0] if str(e) else e),
                              file=sys.stderr)
                        continue
                    if best is None or us < best[1]:
                        best = (bname, us, gqa)
                    break  # the grouped form worked: the repeated one only reads more
            torch.cuda.synchronize()
            del q, k, v
            torch.cuda.empty_cache()
            if best is None:
                f.write("%d,%d,%d,%d,%d,none,,,\n" % (B, N, Nkv, D, S))
                continue
            gbps = B * Nkv * S * D * 2 * 2 / (best[1] * 1e3)
            f.write("%d,%d,%d,%d,%d,%s,%.1f,%.0f,%s\n" % (B, N, Nkv, D, S, best[0], best[1], gbps, best[2]))
            f.flush()
            print("%d,%d,%d,%d,%d %s %.1f us %.0f GB/s" % (B, N, Nkv, D, S, best[0], best[1], gbps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
