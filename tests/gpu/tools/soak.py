#!/usr/bin/env python3
"""Soak test of the collector (issue 15): the FP8 training sample traced for a long time, with an untraced twin
running beside it on the same GPU, and both processes' RSS sampled every minute. The collector's own memory is
the difference traced - untraced, which must stay flat; the job's own growth (the sample keeps every loss until
the end) is in both and cancels. The trace must end finished with no dropped record.

  soak.py run --build BUILD --dir DIR [--minutes M]   the soak itself (runs in the foreground; start it detached
                                                     with setsid on the device, see tests/gpu/README.md)
  soak.py show --dir DIR [--out OUT] [--wait-s S]     prints DIR/soak.json (and copies it and the logs to OUT),
                                                     after waiting up to S seconds for the soak to end

Both jobs run for M minutes (train.py --max-seconds) and end by themselves: the traced one's exit finishes the trace,
as at the end of a real run. --steps is set from a short untraced calibration run, high enough never to end first. DIR/soak.json is rewritten after every
sample, so a soak cut short still leaves its figures.
Exit codes: 0 passed, 1 failed, 2 usage, 77 no CUDA device."""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TRAIN = REPO / "samples" / "torch" / "train.py"
ARGS = ["--precision", "fp8"]  # the sample's default model: 4 layers, d_model 1024, statistics every 10th step
SAMPLE_EVERY_S = 60
STEPS_MARGIN = 1.25  # --steps covers M minutes at 1.25x the calibration's speed: --max-seconds ends the run


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def median_step_ms(python):
    out = subprocess.run([python, str(TRAIN), *ARGS, "--steps", "40"], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return out.returncode, None
    for line in out.stdout.splitlines():
        if line.startswith("FP8SCOPE_GROUND_TRUTH "):
            return 0, json.loads(line.split(" ", 1)[1])["median_step_ms"]
    return 1, None


def trace_figures(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM FP8SCOPE_META"))
        dropped = db.execute("SELECT COALESCE(SUM(count), 0) FROM FP8SCOPE_DROPPED").fetchone()[0]
    finally:
        db.close()
    return {"finished": meta.get("finished"), "finish_reason": meta.get("finish_reason"),
            "dropped_records": meta.get("dropped_records"), "dropped_rows_sum": dropped,
            "kernels": meta.get("row_count.FP8SCOPE_KERNEL"),
            "api_rows": meta.get("row_count.CUPTI_ACTIVITY_KIND_RUNTIME"),
            "tensor_stats": meta.get("row_count.FP8SCOPE_TENSOR_STATS"), "scalars": meta.get("row_count.FP8SCOPE_SCALAR"),
            "step_markers": meta.get("row_count.FP8SCOPE_STEP_MARKER"),
            "bytes": Path(path).stat().st_size}


def run(args):
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    out_json = directory / "soak.json"
    python = sys.executable
    rc, step_ms = median_step_ms(python)
    if step_ms is None:
        out_json.write_text(json.dumps({"error": f"calibration run failed with exit code {rc}"}))
        return 77 if rc == 77 else 1
    steps = max(100, int(args.minutes * 60_000 * STEPS_MARGIN / step_ms))
    build = Path(args.build).resolve()
    # The fp8scope package in both jobs (a no-op in the untraced one): step markers, the loss as a scalar, and the
    # FP8 casts' statistics every 10th step go into the trace.
    package = dict(os.environ, PYTHONPATH=str(REPO / "probes" / "python"))
    env = dict(package, CUDA_INJECTION64_PATH=str(build / "lib" / "libfp8scope.so"),
               NVTX_INJECTION64_PATH=str(build / "lib" / "libfp8scope.so"),
               FP8SCOPE_OUTPUT=str(directory / "soak-%p.sqlite"))
    argv = [python, str(TRAIN), *ARGS, "--steps", str(steps), "--max-seconds", str(args.minutes * 60)]
    logs = {name: open(directory / f"{name}.log", "w") for name in ("traced", "untraced")}
    t0 = time.monotonic()
    traced = subprocess.Popen(argv, env=env, stdout=logs["traced"], stderr=subprocess.STDOUT)
    untraced = subprocess.Popen(argv, env=package, stdout=logs["untraced"], stderr=subprocess.STDOUT)
    result = {"minutes_asked": args.minutes, "calibration_step_ms": step_ms, "steps": steps, "samples": []}

    def save():
        tmp = out_json.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1))
        tmp.replace(out_json)

    while traced.poll() is None:
        time.sleep(SAMPLE_EVERY_S - (time.monotonic() - t0) % SAMPLE_EVERY_S)
        sample = {"t_s": round(time.monotonic() - t0), "traced_kib": rss_kib(traced.pid),
                  "untraced_kib": rss_kib(untraced.pid) if untraced.poll() is None else None}
        if sample["traced_kib"] is not None:
            result["samples"].append(sample)
            save()
    untraced.wait()
    result["traced_rc"], result["untraced_rc"] = traced.returncode, untraced.returncode
    result["traced_minutes"] = round((time.monotonic() - t0) / 60, 1)
    traces = sorted(directory.glob("soak-*.sqlite"))
    result["trace"] = trace_figures(traces[0]) if len(traces) == 1 else {"error": f"{len(traces)} traces"}
    result.update(judge(result))
    save()
    return 0 if result["passed"] else 1


def judge(result):
    """The collector's memory (traced - untraced RSS) from the third minute on, while both ran: flat means its
    largest and smallest differ by less than 32 MiB."""
    both = [s for s in result["samples"] if s["untraced_kib"] is not None and s["t_s"] >= 180]
    diffs = [s["traced_kib"] - s["untraced_kib"] for s in both]
    spread = (max(diffs) - min(diffs)) if len(diffs) >= 2 else None
    trace = result.get("trace", {})
    flat = spread is not None and spread < 32 * 1024
    ok = (result.get("traced_rc") == 0 and result.get("untraced_rc") == 0 and trace.get("finished") == 1
          and trace.get("dropped_records") == 0 and flat)
    return {"collector_rss_kib_first": diffs[0] if diffs else None, "collector_rss_kib_last": diffs[-1] if diffs else None,
            "collector_rss_spread_kib": spread, "rss_flat": flat, "passed": ok}


def show(args):
    path = Path(args.dir) / "soak.json"
    deadline = time.monotonic() + (args.wait_s or 0)
    while time.monotonic() < deadline and not (path.exists() and "passed" in json.loads(path.read_text() or "{}")):
        time.sleep(5)
    if not path.exists():
        print(f"soak.py: no {path}", file=sys.stderr)
        return 1
    result = json.loads(path.read_text())
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1))
    for s in result.get("samples", []):
        print(f"  t={s['t_s']:5d} s  traced {s['traced_kib']} KiB  untraced {s['untraced_kib']} KiB")
    if args.out:
        for name in ("soak.json", "traced.log", "untraced.log"):
            if (Path(args.dir) / name).exists():
                shutil.copy(Path(args.dir) / name, Path(args.out) / f"soak-{name}")
    return 0 if result.get("passed") else 1


def parse_run_show(doc, add_run_arguments=None):
    """The `run --build --dir --minutes` / `show --dir --out --wait-s` command line of this soak and of
    monitor_soak.py; add_run_arguments(parser) adds a soak's own options to `run`."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--minutes", type=float, default=30)
    if add_run_arguments:
        add_run_arguments(r)
    s = sub.add_parser("show")
    s.add_argument("--dir", required=True)
    s.add_argument("--out")
    s.add_argument("--wait-s", type=float, help="first wait up to this long for the soak to end")
    return p.parse_args()


def main():
    args = parse_run_show(__doc__)
    return run(args) if args.command == "run" else show(args)


if __name__ == "__main__":
    sys.exit(main())
