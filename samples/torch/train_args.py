"""samples/torch/train.py's command line (train.py's docstring gives the options' purpose): the options, the
data-parallel set-up read from torchrun's environment, and the planted straggler. No torch import, so that
tests/gpu/selftest/train_args_test.py checks it without torch or a GPU."""

import argparse
import math
import os

# --plant-drift's SITE: the linear of a block whose input gets the outlier, and what that input is.
DRIFT_SITES = {"fc1": "ln2's output", "fc2": "the GELU output (fc1's, activated)", "qkv": "ln1's output",
               "proj": "the attention output"}

DESCRIPTION = "fp8scope's standing real workload: a small decoder-only transformer trained on synthetic tokens."


def parse_args(argv, environ=None):
    environ = os.environ if environ is None else environ
    p = argparse.ArgumentParser(description=DESCRIPTION)
    p.add_argument("--steps", type=int, default=30, help="training steps (default 30)")
    p.add_argument("--precision", choices=("bf16", "fp8"), default="bf16")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup-steps", type=int, default=5, help="linear learning-rate warm-up")
    p.add_argument("--amax-history", type=int, default=16, help="fp8: amax history length per tensor")
    p.add_argument("--margin", type=int, default=0, help="fp8: scale = (fp8_max / amax) / 2**margin")
    p.add_argument(
        "--attention",
        choices=("math", "flash"),
        default="math",
        help="SDPA backend: math (deterministic, default) or flash (faster; its backward is not deterministic "
        "under warn_only=True)",
    )
    p.add_argument("--dataloader-workers", type=int, default=0, help="DataLoader worker processes (fork)")
    p.add_argument("--profile-torch", metavar="OUT.json", help="run under torch.profiler, write kernel counts")
    p.add_argument(
        "--no-annotate",
        action="store_true",
        help="do not call fp8scope.torch.annotate(model) (NVTX module ranges, statistics at FP8 casts)",
    )
    p.add_argument(
        "--no-markers",
        action="store_true",
        help="mark no steps: no fp8scope.step, no NVTX step range, no fp8scope.log_scalar (a job written without "
        "fp8scope, whose steps and loss come from the optimizer and backward hooks of `fp8scope record`)",
    )
    p.add_argument(
        "--plant-overflow",
        metavar="BLOCK:STEP:FACTOR",
        help="test run: multiply block BLOCK's fc2 input by FACTOR in step STEP, so that its delayed FP8 scale "
        "no longer covers it (fp8scope must flag that site and step)",
    )
    p.add_argument(
        "--plant-drift",
        metavar="BLOCK:STEP:FACTOR[:SITE]",
        help="test run, in either precision: from step STEP on, feature 0 of the input of block BLOCK's linear SITE "
        "is multiplied by FACTOR**(step - STEP + 1), a gradual outlier that both precisions see; what differs is "
        "FP8's handling of it (fp8scope compare must name that operand, with its onset near STEP). SITE: fc1 (the "
        "default: ln2's output), fc2 (the GELU output), qkv (ln1's output) or proj (the attention output)",
    )
    p.add_argument(
        "--drift-no-sync",
        action="store_true",
        help="with --plant-drift: set the outlier's gain on the device (a fill kernel), without the pageable copy "
        "and stream sync (2 host-blocking calls per step from STEP on) that the default assignment makes",
    )
    p.add_argument(
        "--drift-outlier",
        action="store_true",
        help="with --plant-drift: at STEP, raise feature 0 to the largest value of the other features (on the device, "
        "no host sync), so that the input's amax itself grows FACTOR a step from STEP on",
    )
    p.add_argument(
        "--scaling",
        choices=("delayed", "current"),
        default="delayed",
        help="fp8: delayed scaling (the scale from earlier steps' amaxes, TransformerEngine's DelayedScaling; the "
        "default) or current scaling (each cast's scale from the tensor's own amax, an extra reduction first)",
    )
    p.add_argument(
        "--ddp",
        action="store_true",
        help="under torchrun: DistributedDataParallel over NCCL even with one process (more than one process, "
        "WORLD_SIZE > 1, implies it)",
    )
    p.add_argument("--straggler-rank", type=int, metavar="R",
                   help="data-parallel test run: rank R sleeps before its forward pass (with --straggler-sleep-ms)")
    p.add_argument("--straggler-sleep-ms", type=float, metavar="MS", help="the straggler's sleep per step")
    p.add_argument("--straggler-steps", metavar="A:B",
                   help="the straggler sleeps in steps A to B (inclusive; default: every step)")
    p.add_argument(
        "--no-amax-reduction",
        action="store_true",
        help="data-parallel fp8 test run: each rank updates its scales from its own amaxes only, so that the ranks' "
        "scales disagree (fp8scope's scale agreement must report it)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        metavar="S",
        help="end after the step during which S seconds of training have passed, even before --steps (soak tests: "
        "the run lasts a set time, and its exit still finishes the trace)",
    )
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.d_model % args.heads != 0:
        p.error("--d-model must be a multiple of --heads")
    # torch._scaled_mm needs every GEMM dimension to be a multiple of 16 (batch * seq is one when seq is); the BF16
    # run keeps the same shapes so that the two precisions compare.
    for flag, value in (("--d-model", args.d_model), ("--seq", args.seq), ("--vocab", args.vocab)):
        if value % 16 != 0:
            p.error(f"{flag} must be a multiple of 16 (FP8 GEMM shapes)")
    if args.batch < 1 or args.layers < 1:
        p.error("--batch and --layers must be at least 1")
    if args.amax_history < 1 or args.dataloader_workers < 0 or args.warmup_steps < 0:
        p.error("--amax-history must be >= 1, --dataloader-workers and --warmup-steps >= 0")
    args.plant = None
    if args.plant_overflow:
        try:
            block, step, factor = args.plant_overflow.split(":")
            args.plant = (int(block), int(step), float(factor))
        except ValueError:
            p.error("--plant-overflow expects BLOCK:STEP:FACTOR, e.g. 2:12:1000")
        if not 0 <= args.plant[0] < args.layers or not 0 <= args.plant[1] < args.steps:
            p.error("--plant-overflow: BLOCK must be a layer index and STEP a step index")
    args.drift = None
    if args.plant_drift:
        try:
            block, step, factor, *site = args.plant_drift.split(":")
            if len(site) > 1:
                raise ValueError
            args.drift = (int(block), int(step), float(factor), site[0] if site else "fc1")
        except ValueError:
            p.error("--plant-drift expects BLOCK:STEP:FACTOR[:SITE], e.g. 1:14:1.5 or 0:8:1.12:fc2")
        if args.drift[3] not in DRIFT_SITES:
            p.error(f"--plant-drift: SITE must be one of {', '.join(DRIFT_SITES)}")
        if not 0 <= args.drift[0] < args.layers or not 0 <= args.drift[1] < args.steps:
            p.error("--plant-drift: BLOCK must be a layer index and STEP a step index")
        if not args.drift[2] > 1.0 or not math.isfinite(args.drift[2]):
            p.error("--plant-drift: FACTOR must be a finite number above 1")
    if args.drift_no_sync and not args.drift:
        p.error("--drift-no-sync needs --plant-drift")
    if args.drift_outlier and not args.drift:
        p.error("--drift-outlier needs --plant-drift")
    parse_distributed(p, args, environ)
    return args


def parse_distributed(p, args, environ):
    """Sets args.distributed, rank, local_rank, world_size and straggler ((rank, sleep_ms, first, last) or None)."""
    try:
        args.world_size = int(environ.get("WORLD_SIZE", "1"))
    except ValueError:
        p.error(f"WORLD_SIZE must be a number, not {environ.get('WORLD_SIZE')!r}")
    args.distributed = args.ddp or args.world_size > 1
    args.rank, args.local_rank = 0, 0
    if args.distributed:
        missing = [v for v in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if v not in environ]
        if missing:
            p.error(f"data-parallel runs need torchrun's environment: {', '.join(missing)} not set")
        try:
            args.rank, args.local_rank = int(environ["RANK"]), int(environ["LOCAL_RANK"])
        except ValueError:
            p.error("RANK and LOCAL_RANK must be numbers")
        if args.precision == "fp8" and args.scaling == "current":
            p.error("--scaling current is single-process only: data-parallel FP8 uses delayed scaling, its amaxes "
                    "reduced across the ranks")
        if args.profile_torch:
            p.error("--profile-torch is single-process only")
    if args.no_amax_reduction and not (args.distributed and args.precision == "fp8"):
        p.error("--no-amax-reduction needs a data-parallel --precision fp8 run")
    args.straggler = None
    if args.straggler_rank is None and args.straggler_sleep_ms is None and args.straggler_steps is None:
        return
    if args.straggler_rank is None or args.straggler_sleep_ms is None:
        p.error("--straggler-rank and --straggler-sleep-ms go together (--straggler-steps needs both)")
    if not args.distributed:
        p.error("--straggler-rank needs a data-parallel run (torchrun, or --ddp)")
    if not 0 <= args.straggler_rank < args.world_size:
        p.error(f"--straggler-rank must be a rank below the world size ({args.world_size})")
    if not (args.straggler_sleep_ms > 0 and math.isfinite(args.straggler_sleep_ms)):
        p.error("--straggler-sleep-ms must be a positive number")
    first, last = 0, args.steps - 1
    if args.straggler_steps:
        try:
            first, last = (int(x) for x in args.straggler_steps.split(":"))
        except ValueError:
            p.error("--straggler-steps expects A:B, e.g. 2:7")
        if not 0 <= first <= last < args.steps:
            p.error(f"--straggler-steps: need 0 <= A <= B < --steps ({args.steps})")
    args.straggler = (args.straggler_rank, args.straggler_sleep_ms, first, last)


def straggler_sleep_s(args, step):
    """The seconds this rank sleeps before step's forward pass: the planted straggler's, else 0."""
    if args.straggler is None:
        return 0.0
    rank, sleep_ms, first, last = args.straggler
    return sleep_ms / 1000.0 if rank == args.rank and first <= step <= last else 0.0
