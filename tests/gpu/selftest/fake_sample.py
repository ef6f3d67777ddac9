"""A stand-in for a CUDA sample and the collector together, for testing run_all.py without a GPU.

  fake_sample.py NAME [--steps N] [...]     prints NAME's default ground truth; with CUDA_INJECTION64_PATH set it
                                            writes a trace at FP8SCOPE_OUTPUT as a perfect collector would.
A --steps of 1000 or more runs "forever" (until a signal), committing kernel rows in WAL mode as it goes."""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_trace  # noqa: E402

K = "kernels_by_name"
TRUTHS = {
    "launch_bound": {"kernels": 20004, K: {"fp8scope_tiny": 20000, "fp8scope_spin": 4}, "steps": 8,
                     "syncs": {"stream": 8}, "memcpy": {"dtoh_blocking": 1}, "memset": 1},
    "host_stall": {"kernels": 80, K: {"fp8scope_spin": 80}, "steps": 10, "syncs": {"stream": 10},
                   "memcpy": {"dtoh_blocking": 1}, "memset": 1},
    "syncs": {"kernels": 100, K: {"fp8scope_spin": 100}, "steps": 20,
              "syncs": {"stream": 20, "device": 20, "event": 20}, "memcpy": {"dtoh_blocking": 20, "async_pageable": 20},
              "memset": 1, "event_records": 20},
    "multistream": {"kernels": 40, K: {"fp8scope_spin": 30, "fp8scope_tiny": 10}, "steps": 10,
                    "syncs": {"stream": 10, "stream_wait_event": 40}, "memcpy": {"dtoh_blocking": 1}, "memset": 1,
                    "event_records": 30, "host_funcs": 10, "kernels_per_stream": [20, 10, 10]},
    "graph": {"kernels": 200, K: {"fp8scope_spin": 100, "fp8scope_tiny": 100}, "steps": 20, "graph_launches": 20,
              "syncs": {"stream": 20}, "memcpy": {"dtoh_blocking": 1}, "memset": 1, "graph_kernels": 200},
}


def trace_path():
    if not os.environ.get("CUDA_INJECTION64_PATH"):
        return None
    pattern = os.environ.get("FP8SCOPE_OUTPUT", "fp8scope-%h-%p.sqlite")
    path = pattern.replace("%p", str(os.getpid())).replace("%h", "host")
    if not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
        print(f"fp8scope: warning: cannot create trace '{path}': No such file or directory (this process is not "
              "traced)", file=sys.stderr)
        return None
    return path


def run_forever(path):
    db = fake_trace.create_empty(path, wal=True) if path else None
    writer = fake_trace.Writer(db) if db else None

    def on_term(signum, _frame):
        if writer:
            writer.finish("SIGTERM")
            db.close()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, on_term)
    while True:
        if writer:
            for _ in range(20):
                writer.kernel("fp8scope_spin")
            writer.db.commit()
        time.sleep(0.05)


def main():
    name = sys.argv[1]
    args = sys.argv[2:]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else None
    path = trace_path()
    if steps is not None and steps >= 1000:
        run_forever(path)
    truth = {"sample": name, "nvtx_step_range": "train_step", **TRUTHS[name]}
    truth["nvtx_ranges"] = truth["steps"]
    truth["kernel_launch_calls"] = truth["kernels"] if name != "graph" else 10
    now = time.time_ns()
    truth["step_ns"] = [[now + i * 1000, now + i * 1000 + 500] for i in range(truth["steps"])]
    print(f"{name}: {truth['kernels']} kernels executed")
    print(f"step 0 stall start_ns {now} end_ns {now + 5} duration_ns 5")
    if path:
        fake_trace.from_truth(path, truth, spoil=os.environ.get("FAKE_SPOIL", "").split(","))
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps(truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
