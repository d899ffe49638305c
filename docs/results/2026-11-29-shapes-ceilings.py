#!/usr/bin/env python3
"""Each cell of the shapes sweep against its ceilings (docs/gemm-notes.md, step 73).

Reads 2026-11-29-h200-sm90-ncu-shapes-cublas-and-dmma-tma-b9d6c479f84d.csv (ncu, NVIDIA H200, one launch of each
kernel after a warm-up, clocks and caches as found) and prints, per cell: cuBLAS's and dmma_tma's time (the last
launch of each kernel of the row, summed), their tensor-pipe and DRAM shares of the elapsed cycles, the two floors
and how far cuBLAS stands above them:
  compute floor: 2 M N K flops at 256 FP64 tensor-core flops a cycle and SM (a DMMA.16x8x16 every 64 cycles on each
                 of the four sub-partitions), 132 SMs, at the SM clock cuBLAS's kernel ran at;
  DRAM floor:    C written once (8 M N bytes), and A and B read once where they do not fit the 50 MiB L2 together
                 (the sweep runs warm), at the DRAM peak that ncu's throughput share implies (bytes / time / share).
`bound` is cuBLAS's time over the larger floor (no kernel can beat cuBLAS by more); `practical` the same with the
tensor pipe at 98.5% (cuBLAS's own at 8192^3) and DRAM at 93.8% (the best share any kernel read in this file).
Their geometric means over the 30 cells bound the sweep's. usage: 2026-11-29-shapes-ceilings.py [CSV]
"""
import csv
import math
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "2026-11-29-h200-sm90-ncu-shapes-cublas-and-dmma-tma-b9d6c479f84d.csv")
SMS, FLOPS_PER_SM_CYCLE, L2 = 132, 256, 50 * 2**20
PIPE, DRAM = 0.985, 0.938

cells = OrderedDict()
for r in csv.DictReader(open(PATH)):
    cells.setdefault(r["shape"], {}).setdefault(r["row"], OrderedDict())[r["kernel"]] = r  # the last launch wins


def row_of(kernels):
    t = sum(float(k["gpu__time_duration.sum"]) for k in kernels.values())
    share = lambda m: sum(float(k[m]) * float(k["gpu__time_duration.sum"]) for k in kernels.values()) / t
    dram_bytes = sum(float(k["dram__bytes_read.sum"]) + float(k["dram__bytes_write.sum"]) for k in kernels.values())
    clock = max(float(k["sm__cycles_elapsed.avg.per_second"]) for k in kernels.values())
    dram = share("dram__throughput.avg.pct_of_peak_sustained_elapsed")
    return dict(t=t, tensor=share("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"), dram=dram,
                peak=dram_bytes / (t * 1e-9) / (dram / 100), clock=clock)


print(f"{'M x N x K':>16} {'cuBLAS us':>9} {'ours us':>8} {'ratio':>6} | {'tensor':>13} {'DRAM':>11} | "
      f"{'cmp floor':>9} {'mem floor':>9} {'bound':>6} {'practical':>9}")
logs = {"ratio": 0.0, "bound": 0.0, "practical": 0.0}
for shape, rows in cells.items():
    M, N, K = map(int, shape.split("x"))
    v, o = row_of(rows["cublas"]), row_of(rows["dmma_tma"])
    compute = 2 * M * N * K / (FLOPS_PER_SM_CYCLE * SMS * v["clock"]) * 1e9  # ns
    ab = 8 * (M * K + K * N)
    memory = (8 * M * N + (ab if ab > L2 else 0)) / v["peak"] * 1e9
    bound = v["t"] / max(compute, memory)
    practical = v["t"] / max(compute / PIPE, memory / DRAM)
    ratio = v["t"] / o["t"]
    for k, x in (("ratio", ratio), ("bound", bound), ("practical", practical)):
        logs[k] += math.log(x)
    print(f"{shape:>16} {v['t'] / 1e3:9.1f} {o['t'] / 1e3:8.1f} {ratio:6.3f} | {v['tensor']:5.1f} / {o['tensor']:5.1f} "
          f"{v['dram']:4.1f} / {o['dram']:4.1f} | {compute / 1e3:9.1f} {memory / 1e3:9.1f} {bound:6.3f} {practical:9.3f}")
n = len(cells)
print(f"geometric means over {n} cells: ours / cuBLAS (one launch under ncu) {math.exp(logs['ratio'] / n):.3f}, "
      f"bound {math.exp(logs['bound'] / n):.3f}, practical {math.exp(logs['practical'] / n):.3f}")
