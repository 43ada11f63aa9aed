#!/usr/bin/env python3
"""What a decode step costs from Python beyond its kernel: one IncreFlashAttention step over a 128 MiB fp16 cache
(B = 1, N = 32, N_kv = 8, D = 128, S = 32768, BNSD), planned once (ifa.Plan) and run ROUNDS times, each run's wall
time (the call and the wait for its result) against its kernel's device time from the profiling event, for:
  device   pyopencl arrays on the context's queue (Context(queue=...)): nothing copied
  host     NumPy arrays from Context.empty, aligned as the CPU device asks: used in place (CPU devices only)
  copied   NumPy arrays that are not: copied in, the output read back
  per-call ifa.Context.run, which plans and allocates every call (the convenience path)
Prints a CSV row per mode: the median wall, device and overhead (wall - device) in microseconds, then the time of
the run() call itself with device arrays when the queue is busy (50 steps enqueued back to back, as an engine
enqueues a step's layers): Python's and the library's host work without OpenCL's wake-up and completion latency.
  tools/python_overhead.py [ROUNDS]      (IFA_LIBRARY selects the library; needs python3-pyopencl)
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debian_python import rerun_if_missing  # noqa: E402

rerun_if_missing("numpy", "pyopencl")
import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402
import pyopencl.array as cla  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ifa  # noqa: E402

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
b, n, nkv, d, s = 1, 32, 8, 128, 32768
queue = cl.CommandQueue(cl.create_some_context(interactive=False),
                        properties=cl.command_queue_properties.PROFILING_ENABLE)
ctx = ifa.Context(queue=queue)
rng = np.random.default_rng(1)
q = rng.uniform(-1, 1, (b, n, 1, d)).astype(np.float16)
kh = rng.uniform(-1, 1, (b, nkv, s, d)).astype(np.float16)
vh = rng.uniform(-1, 1, (b, nkv, s, d)).astype(np.float16)
attrs = dict(num_heads=n, num_key_value_heads=nkv, scale_value=d ** -0.5, input_layout="BNSD")


def timed(step, finish):
    walls, devs = [], []
    for i in range(rounds + 3):
        t0 = time.perf_counter()
        step()
        finish()
        wall = (time.perf_counter() - t0) * 1e6
        if i >= 3:  # warm-ups: builds, first touches
            walls.append(wall)
            devs.append(plan.device_ns / 1e3 if plan.device_ns else float("nan"))
    return statistics.median(walls), statistics.median(devs)


print("mode,wall_us,device_us,overhead_us,rounds,device")
plan = ctx.plan("IncreFlashAttention", query=q, key=kh, value=vh, **attrs)
plan.profile = True
qd, kd, vd = (cla.to_device(queue, x) for x in (q, kh, vh))
out_d = cla.empty(queue, q.shape, np.float16)
rows = {"device": timed(lambda: plan.run(query=qd, key=kd, value=vd, attention_out=out_d), queue.finish)}
if ctx._host_align:
    qa, ka, va, out_a = (ctx.empty(x.shape, x.dtype) for x in (q, kh, vh, q))
    for dst, src in ((qa, q), (ka, kh), (va, vh)):
        dst[:] = src
    rows["host"] = timed(lambda: plan.run(query=qa, key=ka, value=va, attention_out=out_a), lambda: None)
kc = np.empty(kh.size + 1, np.float16)[1:].reshape(kh.shape)  # 2 bytes off an aligned start: copied
kc[:] = kh
rows["copied"] = timed(lambda: plan.run(query=q, key=kc, value=vh), lambda: None)
rows["per-call"] = (timed(lambda: ctx.run("IncreFlashAttention", query=q, key=kh, value=vh, **attrs), lambda: None)[0],
                    rows["device"][1])
for mode, (wall, dev) in rows.items():
    print("%s,%.1f,%.1f,%.1f,%d,%s" % (mode, wall, dev, wall - dev, rounds, queue.device.name))
plan.profile = False
busy = []
for _ in range(5):
    queue.finish()
    plan.run(query=qd, key=kd, value=vd, attention_out=out_d)  # the queue busy from here
    t0 = time.perf_counter()
    for _ in range(50):
        plan.run(query=qd, key=kd, value=vd, attention_out=out_d)
    busy.append((time.perf_counter() - t0) * 1e6 / 50)
    queue.finish()
print("# run() with device arrays, the queue busy: %.1f us a call (median of 5 x 50)" % statistics.median(busy))
# the runtime's own floor: a one-store kernel enqueued from idle and waited for, its wall time minus its device time
prog = cl.Program(queue.context, "__kernel void one(__global int *x) { x[0] = 1; }").build()
flag = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4)
floor = []
for i in range(rounds + 3):
    t0 = time.perf_counter()
    ev = prog.one(queue, (1,), None, flag)
    queue.finish()
    wall = (time.perf_counter() - t0) * 1e6
    if i >= 3:
        floor.append(wall - (ev.profile.end - ev.profile.start) / 1e3)
print("# the OpenCL runtime's floor: a one-store kernel from idle, %.1f us of wall time beyond its device time"
      % statistics.median(floor))
