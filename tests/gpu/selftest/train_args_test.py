#!/usr/bin/env python3
"""samples/torch/train.py without torch or a GPU: its data-parallel options (torchrun's environment, --ddp, the
planted straggler) and its planted drift (--plant-drift's SITE, --drift-no-sync) are parsed and checked as documented, and its printed ground truth keeps the single-process form
while a data-parallel rank adds its own fields. torch is a stand-in (unittest.mock) just deep enough to import the
sample and run main() with train() replaced.

  train_args_test.py            exit 0: all cases as expected, 1: a case failed
"""

import contextlib
import io
import json
import sys
import types
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[3]

# The single-process truth's fields (samples/README.md, "Ground-truth fields"): its form must not change.
SINGLE_KEYS = {
    "sample", "steps", "precision", "median_step_ms", "loop_s", "markers", "step_ms", "losses", "seed", "model", "attention",
    "fp8_linears", "amax_history", "margin", "fp8_final_scales", "dataloader_workers", "nvtx_step_range",
    "fp8scope_package", "fp8scope_annotate", "planted_overflow", "planted_drift", "scaling",
    "profiled_with_torch_profiler", "torch_version", "device",
}
DDP_KEYS = {"rank", "world_size", "local_rank", "ddp", "amax_reduction", "straggler_rank", "straggler_sleep_ms",
            "straggler_steps", "slept_ms"}
TORCHRUN_2 = {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def stub_torch():
    """A `torch` whose classes the sample subclasses are plain classes and the rest mocks."""
    torch = mock.MagicMock(name="torch")
    torch.__version__ = "0.0-stub"
    torch.nn.Module = type("Module", (), {})
    torch.utils.data.Dataset = type("Dataset", (), {})
    torch.autograd.Function = type("Function", (), {})
    torch.no_grad = lambda: (lambda f: f)
    torch.cuda.get_device_capability.return_value = (9, 0)
    torch.cuda.get_device_name.return_value = "stub GPU"
    modules = {"torch": torch}
    for name in ("cuda", "cuda.nvtx", "distributed", "nn", "nn.functional", "nn.attention", "profiler", "utils",
                 "utils.data", "utils.deterministic"):
        obj = torch
        for part in name.split("."):
            obj = getattr(obj, part)
        modules[f"torch.{name}"] = obj
    return modules


def load_train():
    sys.modules.update(stub_torch())
    sys.modules["fp8scope"] = None  # the package absent: `import fp8scope` raises ImportError
    sys.path.insert(0, str(REPO / "samples" / "torch"))
    import train  # noqa: E402
    return train


def parse(train, argv, environ):
    """(args, None) or (None, the usage error's exit code)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return train.parse_args(argv, environ), None
    except SystemExit as e:
        return None, e.code


def truth_of(train, argv, environ):
    """Runs main() with train() replaced; returns the printed truth."""
    def fake_train(args, device):
        return [9.0] * args.steps, [1.5] * args.steps, 4, {}, [30.1] * (args.steps if args.straggler else 0)
    out = io.StringIO()
    with mock.patch.object(train, "train", fake_train), mock.patch.dict("os.environ", environ, clear=True), \
            contextlib.redirect_stdout(out):
        rc = train.main(argv)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("FP8SCOPE_GROUND_TRUTH ")]
    assert rc == 0 and len(lines) == 1, (rc, out.getvalue())
    return json.loads(lines[0].split(" ", 1)[1])


def main():
    train = load_train()
    problems = []

    def expect(name, ok, detail=""):
        if not ok:
            problems.append(f"{name}: {detail}")

    args, _ = parse(train, ["--precision", "fp8"], {})
    expect("single process", args and not args.distributed and args.straggler is None and args.world_size == 1)
    args, _ = parse(train, [], {**TORCHRUN_2, "WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0"})
    expect("torchrun with one process, no --ddp: single process", args and not args.distributed)
    args, _ = parse(train, ["--ddp"], {**TORCHRUN_2, "WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0"})
    expect("--ddp with one process", args and args.distributed and args.world_size == 1)
    args, _ = parse(train, ["--straggler-rank", "1", "--straggler-sleep-ms", "30"], TORCHRUN_2)
    expect("two processes imply DDP, straggler rank 1", args and args.distributed and args.rank == 1
           and args.local_rank == 1 and args.straggler == (1, 30.0, 0, 29), args and args.straggler)
    expect("the straggler sleeps in every step", args and [train.straggler_sleep_s(args, s) for s in (0, 29)]
           == [0.03, 0.03])
    args, _ = parse(train, ["--straggler-rank", "0", "--straggler-sleep-ms", "30"], TORCHRUN_2)
    expect("other ranks do not sleep", args and train.straggler_sleep_s(args, 3) == 0.0)
    args, _ = parse(train, ["--straggler-rank", "1", "--straggler-sleep-ms", "5", "--straggler-steps", "2:4"],
                    TORCHRUN_2)
    expect("--straggler-steps 2:4", args and [train.straggler_sleep_s(args, s) for s in range(6)]
           == [0, 0, 0.005, 0.005, 0.005, 0], args and args.straggler)

    args, _ = parse(train, ["--plant-drift", "1:14:1.5"], {})
    expect("--plant-drift without SITE: fc1, with the host's copy", args and args.drift == (1, 14, 1.5, "fc1")
           and not args.drift_no_sync, args and args.drift)
    args, _ = parse(train, ["--layers", "2", "--plant-drift", "0:8:1.12:fc2", "--drift-no-sync"], {})
    expect("--plant-drift 0:8:1.12:fc2 --drift-no-sync", args and args.drift == (0, 8, 1.12, "fc2")
           and args.drift_no_sync, args and args.drift)

    args, _ = parse(train, ["--no-markers"], {})
    expect("--no-markers: no step markers", args and args.no_markers)
    args, _ = parse(train, [], {})
    expect("markers by default", args and not args.no_markers)

    usage_errors = [
        ("drift at an unknown site", ["--plant-drift", "1:14:1.5:lm_head"], {}),
        ("drift with five fields", ["--plant-drift", "1:14:1.5:fc1:x"], {}),
        ("drift factor not above 1", ["--plant-drift", "1:14:1.0:qkv"], {}),
        ("--drift-no-sync alone", ["--drift-no-sync"], {}),
        ("--ddp without torchrun", ["--ddp"], {}),
        ("straggler without DDP", ["--straggler-rank", "0", "--straggler-sleep-ms", "30"], {}),
        ("straggler rank = world size", ["--straggler-rank", "2", "--straggler-sleep-ms", "30"], TORCHRUN_2),
        ("negative straggler rank", ["--straggler-rank", "-1", "--straggler-sleep-ms", "30"], TORCHRUN_2),
        ("rank without sleep", ["--straggler-rank", "1"], TORCHRUN_2),
        ("sleep without rank", ["--straggler-sleep-ms", "30"], TORCHRUN_2),
        ("zero sleep", ["--straggler-rank", "1", "--straggler-sleep-ms", "0"], TORCHRUN_2),
        ("infinite sleep", ["--straggler-rank", "1", "--straggler-sleep-ms", "inf"], TORCHRUN_2),
        ("steps past the run", ["--steps", "8", "--straggler-rank", "1", "--straggler-sleep-ms", "30",
                                "--straggler-steps", "2:8"], TORCHRUN_2),
        ("steps reversed", ["--straggler-rank", "1", "--straggler-sleep-ms", "30", "--straggler-steps", "4:2"],
         TORCHRUN_2),
        ("steps not A:B", ["--straggler-rank", "1", "--straggler-sleep-ms", "30", "--straggler-steps", "4"],
         TORCHRUN_2),
        ("current scaling with DDP", ["--precision", "fp8", "--scaling", "current"], TORCHRUN_2),
        ("--profile-torch with DDP", ["--profile-torch", "x.json"], TORCHRUN_2),
        ("--no-amax-reduction in BF16", ["--no-amax-reduction"], TORCHRUN_2),
        ("--no-amax-reduction alone", ["--precision", "fp8", "--no-amax-reduction"], {}),
        ("torchrun's environment incomplete", [], {"WORLD_SIZE": "2", "RANK": "0"}),
        ("WORLD_SIZE not a number", [], {"WORLD_SIZE": "two"}),
    ]
    for name, argv, environ in usage_errors:
        _, code = parse(train, argv, environ)
        expect(f"usage error: {name}", code == 2, f"exit {code}")

    single = truth_of(train, ["--precision", "fp8", "--steps", "3"], {})
    expect("single-process truth keeps its form", set(single) == SINGLE_KEYS, sorted(set(single) ^ SINGLE_KEYS))
    ddp = truth_of(train, ["--precision", "fp8", "--steps", "3", "--straggler-rank", "1", "--straggler-sleep-ms",
                           "30"], TORCHRUN_2)
    expect("DDP truth: single-process fields plus the rank's", set(ddp) == SINGLE_KEYS | DDP_KEYS,
           sorted(set(ddp) ^ (SINGLE_KEYS | DDP_KEYS)))
    expect("DDP truth values", (ddp.get("rank"), ddp.get("world_size"), ddp.get("straggler_rank"),
                                ddp.get("straggler_sleep_ms"), ddp.get("straggler_steps"), ddp.get("steps"),
                                ddp.get("precision"), ddp.get("amax_reduction"))
           == (1, 2, 1, 30.0, [0, 2], 3, "fp8", "max across ranks, once per step after backward"), ddp)
    clean = truth_of(train, ["--precision", "bf16", "--steps", "3", "--ddp"],
                     {**TORCHRUN_2, "WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0"})
    expect("DDP truth without a straggler", (clean.get("straggler_rank"), clean.get("straggler_sleep_ms"),
                                             clean.get("amax_reduction"), clean.get("world_size"))
           == (None, None, None, 1), clean)

    drift = truth_of(train, ["--precision", "fp8", "--steps", "20", "--plant-drift", "1:10:1.1:qkv",
                             "--drift-no-sync"], {})
    expect("planted drift at qkv, no sync", drift.get("planted_drift") == {
        "block": 1, "site": "blocks.1.qkv", "operand": "input (activation)", "input_is": "ln1's output",
        "feature": 0, "from_step": 10, "factor_per_step": 1.1, "host_syncs_per_step": 0, "outlier": False}, drift.get("planted_drift"))
    drift = truth_of(train, ["--precision", "bf16", "--steps", "34", "--plant-drift", "1:18:1.15"], {})
    expect("planted drift at fc1 by default, 2 syncs", (drift["planted_drift"]["site"],
                                                        drift["planted_drift"]["host_syncs_per_step"])
           == ("blocks.1.fc1", 2), drift.get("planted_drift"))

    for p in problems:
        print(f"train_args_test: {p}")
    print(f"train_args_test: {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
