#!/usr/bin/env python3
"""check_ranks.judge_rank_set() on made-up fp8scope.ranks/1 documents, on any machine: a healthy run and a planted
straggler pass, and each spoiled document fails the check it spoils (wrong step count, no communication, another
rank slowest, a wait outside +-20% of the sleep, a scale mismatch, nothing compared). Then the 2-GPU stage with the
recording and the report replaced: every run judged, and ranks.tar laid out as samples/traces/ranks/ expects.

  ranks_judge_test.py          exit 0: every verdict as expected, 1: one was not
"""

import contextlib
import io
import json
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import check_ranks as cr  # noqa: E402
import gpu_common as g  # noqa: E402

MS = 1_000_000


def document(steps=8, straggler=None, wait_ms=30.0, compared=40, mismatches=0, lead="host"):
    """Two ranks, `steps` steps; rank `straggler` (or nobody) makes the other wait `wait_ms` in each step."""
    per_step = []
    for step in range(steps):
        ranks = []
        for rank in (0, 1):
            caused = wait_ms * MS if rank == straggler else 0
            waited = wait_ms * MS if straggler is not None and rank != straggler else 0
            ranks.append({"rank": rank, "step_ns": 50 * MS, "comm_ns": 2 * MS + waited, "exposed_comm_ns": MS + waited,
                          "wait_ns": waited, "caused_wait_ns": caused})
        slowest = straggler if straggler is not None else 0
        per_step.append({"step": step, "slowest_rank": slowest,
                         "slowest_by": "caused_wait" if straggler is not None else "step_time",
                         "slowest_lead_cause": lead, "ranks": ranks})
    first = {"site": "blocks.0.fc1 input", "step": 0} if mismatches else None
    return {"schema": "fp8scope.ranks/1", "world_size": 2,
            "ranks": [{"rank": r, "steps": steps} for r in (0, 1)], "common_steps": list(range(steps)),
            "steps": per_step, "scales": {"compared": compared, "mismatches": mismatches, "first": first}}


def truths(steps=8):
    return {0: {"rank": 0, "steps": steps}, 1: {"rank": 1, "steps": steps}}


def verdicts(doc, straggler=None, scales=None, steps=8):
    return {check.split(": ", 1)[1]: ok for check, ok, _ in cr.judge_rank_set("t", doc, truths(steps), straggler,
                                                                               scales)}


def failed(result):
    return sorted(check for check, ok in result.items() if ok is False)


def main():
    problems = []

    def expect(name, result, failing):
        if failed(result) != sorted(failing):
            problems.append(f"{name}: failed {failed(result)}, expected {sorted(failing)}")

    planted = (1, 30.0)
    expect("clean fp8", verdicts(document(), scales="agree"), [])
    expect("clean bf16 (scales not judged)", verdicts(document(compared=0)), [])
    expect("straggler", verdicts(document(straggler=1), straggler=planted), [])
    expect("straggler at +19%", verdicts(document(straggler=1, wait_ms=35.7), straggler=planted), [])
    expect("no-reduce run", verdicts(document(mismatches=3), scales="disagree"), [])

    steps_name = "steps on every rank = printed"
    doc = document()
    doc["ranks"][1]["steps"] = 7
    expect("a rank with a step short", verdicts(doc, scales="agree"), [steps_name])
    expect("printed more steps", verdicts(document(), scales="agree", steps=9), [steps_name])
    doc = document()
    doc["world_size"] = 3
    expect("world size not the ranks printed", verdicts(doc), [steps_name])

    comm_name = "comm and exposed comm > 0 per step and rank"
    doc = document()
    doc["steps"][5]["ranks"][0]["exposed_comm_ns"] = 0
    expect("exposed comm 0 in one step", verdicts(doc), [comm_name])
    doc = document()
    doc["steps"][1]["ranks"][0]["comm_ns"] = 0  # step 1 is warm-up: not judged
    expect("comm 0 in a warm-up step", verdicts(doc), [])
    expect("no step", verdicts(dict(document(), steps=[])),
           [comm_name, f"no planted-size straggler (every caused wait < 80% of {cr.SLEEP_MS:g} ms)"])

    who, how_long = "straggler = rank 1, by caused wait, in every step >= 2", \
        "rank 1's caused wait at least 80% of 30 ms per step"
    expect("rank 0 the straggler", verdicts(document(straggler=0), straggler=planted), [who, how_long])
    # A longer wait is the straggler's own slower work after its sleep, a wait it caused too: not a failure.
    expect("wait +40%", verdicts(document(straggler=1, wait_ms=42.0), straggler=planted), [])
    expect("wait -21%", verdicts(document(straggler=1, wait_ms=23.7), straggler=planted), [how_long])
    doc = document(straggler=1)
    doc["steps"][4]["slowest_by"] = "step_time"
    expect("slowest by step time", verdicts(doc, straggler=planted), [who])
    doc = document()
    for step in range(2, 8):  # a rank launching slower in every step, under the sleep's line: no planted straggler
        doc["steps"][step]["ranks"][1]["caused_wait_ns"] = 12 * MS
    expect("a clean run with a natural imbalance", verdicts(doc, scales="agree"), [])
    doc["steps"][5]["ranks"][0]["caused_wait_ns"] = 24 * MS  # one step at the sleep's line
    expect("a clean run with one step at the line", verdicts(doc, scales="agree"),
           [f"no planted-size straggler (every caused wait < 80% of {cr.SLEEP_MS:g} ms)"])
    expect("a clean run with a straggler", verdicts(document(straggler=1), scales="agree"),
           [f"no planted-size straggler (every caused wait < 80% of {cr.SLEEP_MS:g} ms)"])

    compute = (1, "compute")
    slow, led = "straggler = rank 1, by caused wait, in every step >= 2", \
        "the straggler's lead cause is compute (a larger batch)"
    expect("a compute straggler", verdicts(document(straggler=1, lead="compute"), straggler=compute), [])
    expect("a compute straggler led by host", verdicts(document(straggler=1), straggler=compute), [led])
    expect("a compute straggler on the other rank", verdicts(document(straggler=0, lead="compute"),
                                                             straggler=compute), [slow])
    lead = "the straggler's lead cause is host (it slept)"
    expect("a straggler led by compute", verdicts(document(straggler=1, lead="compute"), straggler=planted), [lead])
    expect("a straggler led by sync", verdicts(document(straggler=1, lead="sync"), straggler=planted), [lead])

    agree, disagree = "FP8 scales agree across ranks", \
        "FP8 scales without amax reduction disagree, the first named"
    expect("a scale mismatch", verdicts(document(mismatches=1), scales="agree"), [agree])
    expect("nothing compared", verdicts(document(compared=0), scales="agree"), [agree])
    expect("no-reduce run that agrees", verdicts(document(), scales="disagree"), [disagree])
    doc = document(mismatches=3)
    doc["scales"]["first"] = None
    expect("no-reduce run with no first mismatch named", verdicts(doc, scales="disagree"), [disagree])
    info = verdicts(document(straggler=1), straggler=planted)
    if info.get("FP8 scale agreement") is not None:
        problems.append("INFO rows must not be judged")
    problems += stage_plumbing()
    for p in problems:
        print(f"ranks_judge_test: {p}")
    print(f"ranks_judge_test: {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


def stage_plumbing():
    """two_ranks() and pack() with record() and report_json() replaced by made-up runs."""
    with tempfile.TemporaryDirectory() as tmp:
        ctx = g.Ctx(tmp, Path(tmp) / "out", Path(tmp) / "scratch", budget_s=600)
        report = g.Report(ctx)

        def fake_record(ctx, name, nproc, extra_args, script=None):
            directory = ctx.fresh_dir(f"ranks-{name}")
            traces = []
            for rank in range(nproc):
                traces.append(directory / f"rank{rank}.sqlite")
                traces[-1].write_bytes(b"trace of rank %d" % rank)
            argv = ["fp8scope", "record", "-o", "x", "--", "torchrun", *map(str, extra_args)]
            truths = {r: {"rank": r, "steps": 8} for r in range(nproc)}
            return g.Result(name, argv, 0, "", "", 1.0, False), truths, traces, directory

        def fake_report(ctx, name, traces):
            slow = "straggler" in name or "slow-compute" in name
            return document(straggler=1 if slow else None, mismatches=2 if "no-reduce" in name else 0,
                            lead="compute" if "slow-compute" in name else "host")

        saved = cr.record, cr.report_json
        cr.record, cr.report_json = fake_record, fake_report
        try:
            kept = []
            with contextlib.redirect_stdout(io.StringIO()):  # the rows as they come
                cr.two_ranks(ctx, report, kept)
            archive = cr.pack(ctx, kept)
        finally:
            cr.record, cr.report_json = saved
        problems = [f"stage: {r['check']}: {r['result']} {r['figure']}" for r in report.rows
                    if r["result"] not in ("PASS", "INFO")]
        if sum(r["result"] == "PASS" for r in report.rows) != 31:
            problems.append(f"stage: {len(report.rows)} rows, 31 passes expected")
        with tarfile.open(archive) as tar:
            names = sorted(tar.getnames())
            truth = json.load(tar.extractfile("ranks/fp8-straggler/rank1.truth.json"))
        runs = ("fp8-clean", "bf16-clean", "fp8-straggler", "bf16-straggler", "fp8-no-reduce", "mlp-slow-compute")
        wanted = sorted(f"ranks/{run}/rank{r}.{ext}" for run in runs
                        for r in (0, 1) for ext in ("sqlite", "truth.json"))
        if names != wanted:
            problems.append(f"ranks.tar holds {names}")
        if truth.get("rank") != 1 or not truth.get("command", "").startswith("torchrun"):
            problems.append(f"kept truth {truth}")
        return problems


if __name__ == "__main__":
    sys.exit(main())
