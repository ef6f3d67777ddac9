#!/usr/bin/env python3
"""fp8scope's standing real workload: a small decoder-only transformer trained on synthetic tokens.

--precision bf16 runs every GEMM in BF16. --precision fp8 replaces every Linear inside the transformer blocks by
Fp8Linear (fp8_linear.py): torch._scaled_mm with TransformerEngine-style delayed scaling. The run is deterministic
for a given seed, so two runs give bitwise-equal losses; they are printed at the end, after the only host syncs.

Under torchrun (RANK, WORLD_SIZE, LOCAL_RANK set) with more than one process, or with --ddp, each rank trains on
cuda:LOCAL_RANK with DistributedDataParallel over NCCL, on its own share of the batches; in FP8 the amaxes are reduced
(max) across the ranks once per step, so that every rank casts with the same scales. --straggler-rank R
--straggler-sleep-ms MS plants a straggler: rank R sleeps before its forward pass.

Planted numerics faults (test runs): --plant-overflow BLOCK:STEP:FACTOR multiplies blocks.BLOCK.fc2's input by FACTOR
in step STEP. --plant-drift BLOCK:STEP:FACTOR[:SITE] multiplies feature 0 of the input of blocks.BLOCK.SITE (fc1, the
default; fc2, qkv or proj) by FACTOR**(step - STEP + 1) from step STEP on, in either precision; its gain is set from
the host (2 host-blocking calls per step from STEP on) unless --drift-no-sync sets it on the device; --drift-outlier
(no sync either) first raises feature 0 to the largest value of the other features, so that the tensor's amax itself
grows FACTOR a step from STEP on (an outlier feature that keeps growing).

Output (stdout), in this order; samples/README.md gives every field:
  step <i> loss <repr>                 one line per step, printed after the run
  FP8SCOPE_LOSSES [<repr>, ...]        the per-step losses, for bitwise comparison of runs
  FP8SCOPE_GROUND_TRUTH {json}         steps, precision, median step time, losses, configuration (and, data-parallel,
                                       rank, world size, straggler); one line per rank

Exit codes: 0 ok, 2 usage error, 77 no CUDA device (or no FP8 support for --precision fp8).
"""

import os

# cuBLAS is deterministic only with a fixed workspace configuration, which must be set before CUDA initializes
# (PyTorch docs, "Reproducibility"; cuBLAS docs, "Results reproducibility").
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import contextlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.cuda.nvtx  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.profiler  # noqa: E402
import torch.utils.data  # noqa: E402
import torch.utils.deterministic  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fp8_linear import Fp8Linear, reduce_amax_and_update  # noqa: E402
from train_args import DRIFT_SITES, parse_args, straggler_sleep_s  # noqa: E402,F401  (parse_args: tests/gpu/selftest)

try:  # The fp8scope package (probes/) marks steps explicitly when it is installed.
    import fp8scope  # type: ignore
except ImportError:
    fp8scope = None

EXIT_NO_DEVICE = 77
STEP_RANGE = "train_step"  # matched by the analyzer's NVTX step detection (SPEC.md, "Step")
LOOP_SECONDS = [None]  # set by train(): the training loop's wall time, for the ground truth


# The step being trained, for --plant-overflow (set by train()).
CURRENT_STEP = [0]


# ---------------------------------------------------------------------------------------------------------------
# Data: a fixed random bigram chain. Each token has 4 possible successors, so the best achievable loss is ln 4 and
# the loss falls visibly within a few dozen steps. The whole corpus is generated once, before training, from a
# generator seeded with --seed; batch i is always the same tensor, whichever process hands it over.


class SyntheticTokens(torch.utils.data.Dataset):
    SUCCESSORS = 4

    def __init__(self, seed, steps, batch, seq, vocab):
        g = torch.Generator().manual_seed(seed + 1)
        table = torch.randint(0, vocab, (vocab, self.SUCCESSORS), generator=g)
        rows = steps * batch
        choices = torch.randint(0, self.SUCCESSORS, (rows, seq + 1), generator=g)
        tokens = torch.empty((rows, seq + 1), dtype=torch.int64)
        tokens[:, 0] = torch.randint(0, vocab, (rows,), generator=g)
        for t in range(1, seq + 1):
            tokens[:, t] = table[tokens[:, t - 1], choices[:, t]]
        self.batches = tokens.view(steps, batch, seq + 1)

    def __len__(self):
        return self.batches.shape[0]

    def __getitem__(self, index):
        return self.batches[index].clone()  # a (batch, seq + 1) tensor: inputs [:, :-1], targets [:, 1:]


# ---------------------------------------------------------------------------------------------------------------
# Model: pre-LayerNorm decoder blocks. All parameters are BF16; AdamW updates them directly.


def normal_weight(g, out_features, in_features, std):
    return torch.empty(out_features, in_features).normal_(0.0, std, generator=g).to(torch.bfloat16)


def make_linear(g, in_features, out_features, std, args):
    """Both precisions draw the same initial weights in the same order, so BF16 and FP8 runs start equal."""
    weight = normal_weight(g, out_features, in_features, std)
    if args.precision == "fp8":
        layer = Fp8Linear(in_features, out_features, amax_history_len=args.amax_history, margin=args.margin,
                          scaling=args.scaling, defer_amax=args.distributed)
    else:
        layer = nn.Linear(in_features, out_features, bias=False, dtype=torch.bfloat16)
    with torch.no_grad():
        layer.weight.copy_(weight)
    return layer


class Block(nn.Module):
    def __init__(self, g, args, index=0):
        super().__init__()
        self.index = index
        self.plant = args.plant
        self.drift = args.drift if args.drift and args.drift[0] == index else None
        self.drift_no_sync = args.drift_no_sync
        self.drift_outlier = args.drift_outlier
        self.outlier_base = None  # --drift-outlier: feature 0's gain at the onset, on the device
        d = args.d_model
        std = 0.02
        out_std = std / math.sqrt(2 * args.layers)  # GPT-2's scaled init of the residual projections
        self.heads = args.heads
        self.attention_backend = args.attention
        self.ln1 = nn.LayerNorm(d, dtype=torch.bfloat16)
        self.qkv = make_linear(g, d, 3 * d, std, args)
        self.proj = make_linear(g, d, d, out_std, args)
        self.ln2 = nn.LayerNorm(d, dtype=torch.bfloat16)
        self.fc1 = make_linear(g, d, 4 * d, std, args)
        self.fc2 = make_linear(g, 4 * d, d, out_std, args)

    def attention(self, x):
        b, t, d = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        backend = SDPBackend.MATH if self.attention_backend == "math" else SDPBackend.FLASH_ATTENTION
        with sdpa_kernel(backend):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(self.drifted(y.transpose(1, 2).reshape(b, t, d), "proj"))

    def drifted(self, x, site):
        """x, the input of this block's linear `site`, with the planted drift when it targets that input and has begun:
        one outlier feature growing by FACTOR per step, identically in both precisions."""
        if not self.drift or self.drift[3] != site or CURRENT_STEP[0] < self.drift[1]:
            return x
        gain = torch.ones(x.shape[-1], device=x.device, dtype=x.dtype)
        value = self.drift[2] ** (CURRENT_STEP[0] - self.drift[1] + 1)
        if self.drift_outlier:
            # --drift-outlier: at the onset, feature 0 is raised to the largest value of the other features (a ratio
            # kept on the device, no host sync), so that from STEP on it is the tensor's amax and grows FACTOR a step.
            if self.outlier_base is None:
                with torch.no_grad():
                    rest = x[..., 1:].detach().abs().amax()
                    self.outlier_base = (rest / x[..., :1].detach().abs().amax().clamp_min(1e-6)).float()
            gain[:1].copy_(self.outlier_base * value)
        elif self.drift_no_sync:
            gain[:1].fill_(value)  # a fill kernel with the value as its argument: no copy, no host sync
        else:
            # Setting gain[0] from a Python float copies it from pageable memory: 2 host-blocking calls
            # (cudaMemcpyAsync and its cudaStreamSynchronize) per forward from STEP on.
            gain[0] = value
        return x * gain

    def forward(self, x):
        x = x + self.attention(self.drifted(self.ln1(x), "qkv"))
        u = self.drifted(self.ln2(x), "fc1")
        h = self.drifted(F.gelu(self.fc1(u), approximate="tanh"), "fc2")
        if self.plant and self.plant[0] == self.index and self.plant[1] == CURRENT_STEP[0]:
            h = h * self.plant[2]  # the planted overflow: this step's fc2 input exceeds its delayed scale
        return x + self.fc2(h)


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        g = torch.Generator().manual_seed(args.seed)
        d = args.d_model
        self.token_embedding = nn.Parameter(normal_weight(g, args.vocab, d, 0.02))
        self.position_embedding = nn.Parameter(normal_weight(g, args.seq, d, 0.02))
        self.blocks = nn.ModuleList(Block(g, args, i) for i in range(args.layers))
        self.ln_f = nn.LayerNorm(d, dtype=torch.bfloat16)
        # The LM head stays BF16 in both precisions, as TransformerEngine recipes usually keep it.
        self.lm_head = nn.Linear(d, args.vocab, bias=False, dtype=torch.bfloat16)
        with torch.no_grad():
            self.lm_head.weight.copy_(normal_weight(g, args.vocab, d, 0.02))

    def forward(self, tokens):
        x = F.embedding(tokens, self.token_embedding) + self.position_embedding
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------------------------------------------
# Training


def all_reduce_max(tensor):
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)


def keep_own_amax(tensor):
    """--no-amax-reduction: the rank's own amaxes stand."""


def train(args, device):
    model = Transformer(args).to(device)
    fp8_layers = [m for m in model.modules() if isinstance(m, Fp8Linear)]
    step_model = model
    if args.distributed:
        # DDP's default buckets. No buffer broadcast: the only buffers are Fp8Linear's amax histories and scales,
        # which the amax reduction keeps equal on every rank (as TransformerEngine does); broadcasting rank 0's
        # copies every forward would hide a disagreement and add a collective.
        step_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index],
                                                               broadcast_buffers=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)

    # Each rank trains on its own share: batch step * world_size + rank of one corpus (a single process: all of it).
    dataset = SyntheticTokens(args.seed, args.steps * args.world_size, args.batch, args.seq, args.vocab)
    if args.world_size > 1:
        dataset = torch.utils.data.Subset(dataset, range(args.rank, len(dataset), args.world_size))
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=None,  # the dataset already yields whole batches
        shuffle=False,
        num_workers=args.dataloader_workers,
        multiprocessing_context="fork" if args.dataloader_workers > 0 else None,
    )

    losses = torch.zeros(args.steps, dtype=torch.float32, device=device)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(args.steps)]
    # fp8scope (probes/python) when importable: step markers, the loss as a scalar read on the device, and NVTX
    # module names plus statistics at FP8 casts. Each call is a no-op when the job is not recorded.
    annotation = None
    if fp8scope is not None and not args.no_annotate:
        # Casts are measured by Fp8Linear's own probes (before the clamp, so with true overflow counts); the
        # cast-level statistics of annotate would measure each of them a second time, after the clamp.
        annotation = fp8scope.torch.annotate(model, cast_stats=False)

    # No host sync inside the loop: the loss stays on the device, the events are read after the loop, and the batch
    # is copied from pinned memory without blocking. Data-parallel runs end each step with one, as a loss print
    # would: no rank's host then runs steps ahead, so a straggler's lateness in a step is the others' wait in it.
    slept_ms = []
    steps_done = 0
    loop_start = time.monotonic()
    markers = not args.no_markers
    for step, batch in enumerate(loader):
        if markers:
            torch.cuda.nvtx.range_push(STEP_RANGE)
        CURRENT_STEP[0] = step
        if fp8scope is not None and markers:
            fp8scope.step(step)
        start, end = events[step]
        start.record()
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / args.warmup_steps) if args.warmup_steps else args.lr
        batch = batch.pin_memory().to(device, non_blocking=True)
        inputs, targets = batch[:, :-1], batch[:, 1:]
        sleep_s = straggler_sleep_s(args, step)
        if sleep_s:  # the planted straggler: inside the step (after its marker), before the forward pass
            t0 = time.perf_counter()
            time.sleep(sleep_s)
            slept_ms.append((time.perf_counter() - t0) * 1e3)
        logits = step_model(inputs)
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if args.distributed and fp8_layers:
            reduce_amax_and_update(fp8_layers, keep_own_amax if args.no_amax_reduction else all_reduce_max)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses[step].copy_(loss.detach())
        if fp8scope is not None and markers:
            fp8scope.log_scalar("loss", losses[step])
        end.record()
        if args.distributed:
            torch.cuda.synchronize(device)
        if markers:
            torch.cuda.nvtx.range_pop()
        steps_done = step + 1
        if args.max_seconds is not None and time.monotonic() - loop_start >= args.max_seconds:
            break

    LOOP_SECONDS[0] = time.monotonic() - loop_start
    if annotation is not None:
        annotation.remove()
    loss_values = losses[:steps_done].tolist()  # the first host sync of the run
    torch.cuda.synchronize()
    step_ms = [start.elapsed_time(end) for start, end in events[:steps_done]]
    final_scales = {}
    if fp8_layers:
        names = {m: n for n, m in model.named_modules()}
        scales = torch.stack([m.scale for m in fp8_layers]).tolist()
        final_scales = {names[m]: s for m, s in zip(fp8_layers, scales)}
    return loss_values, step_ms, len(fp8_layers), final_scales, slept_ms


# ---------------------------------------------------------------------------------------------------------------
# torch.profiler comparison: counts of CUDA kernels by name over the whole run, taken from the Chrome trace that
# Kineto writes, where every GPU kernel is one event of category "kernel".


def write_profiler_counts(prof, out_path, args):
    trace_path = out_path + ".trace.json"
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        trace = json.load(f)
    os.remove(trace_path)
    by_category = {"kernel": {}, "gpu_memcpy": {}, "gpu_memset": {}, "cuda_runtime": {}, "cuda_driver": {}}
    for event in trace.get("traceEvents", []):
        counts = by_category.get(event.get("cat"))
        if counts is not None and event.get("ph") == "X":
            counts[event["name"]] = counts.get(event["name"], 0) + 1
    result = {
        "source": "torch.profiler (Kineto Chrome trace, activities CPU+CUDA)",
        "scope": "whole run: from before the model is built to after the final losses are read",
        "torch_version": torch.__version__,
        "precision": args.precision,
        "steps": args.steps,
        "kernels": sum(by_category["kernel"].values()),
        "kernels_by_name": dict(sorted(by_category["kernel"].items())),
        "memcpy_by_name": dict(sorted(by_category["gpu_memcpy"].items())),
        "memset_by_name": dict(sorted(by_category["gpu_memset"].items())),
        "runtime_api_by_name": dict(sorted(by_category["cuda_runtime"].items())),
        "driver_api_by_name": dict(sorted(by_category["cuda_driver"].items())),
    }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"torch.profiler: {result['kernels']} kernels, {len(result['kernels_by_name'])} names -> {out_path}")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not torch.cuda.is_available():
        print("train.py: no CUDA device; exiting with code 77", file=sys.stderr)
        return EXIT_NO_DEVICE
    device = torch.device("cuda", args.local_rank if args.distributed else 0)
    if args.precision == "fp8" and torch.cuda.get_device_capability(device) < (8, 9):
        print("train.py: --precision fp8 needs compute capability 8.9 or newer; exiting with code 77", file=sys.stderr)
        return EXIT_NO_DEVICE

    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    # Deterministic mode would also fill every torch.empty with NaN, which adds a kernel per allocation; every
    # output here is written in full, so the fill buys nothing and would distort the workload's kernel mix.
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cudnn.benchmark = False
    if args.distributed:
        torch.cuda.set_device(device)
        # device_id: the NCCL communicator is made now, not inside the first step.
        dist.init_process_group(backend="nccl", device_id=device)

    print(
        f"train.py: {args.precision}, {args.steps} steps, {args.layers} layers, d_model {args.d_model}, "
        f"batch {args.batch} x seq {args.seq}, vocab {args.vocab}, attention {args.attention}, "
        f"dataloader workers {args.dataloader_workers}, torch {torch.__version__}"
        + (f", rank {args.rank} of {args.world_size} (DDP, NCCL)" if args.distributed else ""),
        flush=True,
    )
    profiler = contextlib.nullcontext()
    if args.profile_torch:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        profiler = torch.profiler.profile(activities=activities)
    with profiler as prof:
        losses, step_ms, fp8_linears, final_scales, slept_ms = train(args, device)
    if args.profile_torch:
        write_profiler_counts(prof, args.profile_torch, args)

    for step, loss in enumerate(losses):
        print(f"step {step} loss {loss!r} step_ms {step_ms[step]:.3f}")
    print("FP8SCOPE_LOSSES [" + ", ".join(repr(x) for x in losses) + "]")
    truth = {
        "sample": "torch_train",
        "steps": len(losses),  # --steps, or fewer when --max-seconds ended the run
        "precision": args.precision,
        "median_step_ms": statistics.median(step_ms),
        "loop_s": LOOP_SECONDS[0],  # the training loop's wall time, launches and all (soak tests: steps per second)
        "markers": not args.no_markers,
        "step_ms": step_ms,
        "losses": losses,
        "seed": args.seed,
        "model": {
            "layers": args.layers,
            "d_model": args.d_model,
            "heads": args.heads,
            "seq": args.seq,
            "batch": args.batch,
            "vocab": args.vocab,
        },
        "attention": args.attention,
        "fp8_linears": fp8_linears,
        "amax_history": args.amax_history if args.precision == "fp8" else None,
        "margin": args.margin if args.precision == "fp8" else None,
        "fp8_final_scales": final_scales,
        "dataloader_workers": args.dataloader_workers,
        "nvtx_step_range": None if args.no_markers else STEP_RANGE,
        "fp8scope_package": fp8scope is not None,
        "fp8scope_annotate": fp8scope is not None and not args.no_annotate,
        "planted_overflow": (
            {"block": args.plant[0], "site": f"blocks.{args.plant[0]}.fc2", "step": args.plant[1],
             "factor": args.plant[2]}
            if args.plant
            else None
        ),
        "planted_drift": (
            {"block": args.drift[0], "site": f"blocks.{args.drift[0]}.{args.drift[3]}", "operand": "input (activation)",
             "input_is": DRIFT_SITES[args.drift[3]], "feature": 0, "from_step": args.drift[1],
             "factor_per_step": args.drift[2], "host_syncs_per_step": 0 if args.drift_no_sync or args.drift_outlier else 2,
             "outlier": args.drift_outlier}
            if args.drift
            else None
        ),
        "scaling": args.scaling if args.precision == "fp8" else None,
        "profiled_with_torch_profiler": bool(args.profile_torch),
        "torch_version": torch.__version__,
        "device": torch.cuda.get_device_name(device),
    }
    if args.distributed:
        truth.update(distributed_truth(args, slept_ms))
        sys.stdout.flush()  # the ranks share one pipe: the truth line goes out in one write of its own
    print("FP8SCOPE_GROUND_TRUTH " + json.dumps(truth), flush=args.distributed)
    if args.distributed:
        dist.destroy_process_group()
    return 0


def distributed_truth(args, slept_ms):
    """The ground-truth fields only data-parallel runs print (a single process's truth keeps its form)."""
    rank, sleep_ms, first, last = args.straggler or (None, None, None, None)
    return {
        "rank": args.rank,
        "world_size": args.world_size,
        "local_rank": args.local_rank,
        "ddp": {"backend": "nccl", "bucket_cap_mb": "default", "broadcast_buffers": False, "host_sync_per_step": True},
        "amax_reduction": None if args.precision != "fp8" else "none (--no-amax-reduction)" if args.no_amax_reduction
        else "max across ranks, once per step after backward",
        "straggler_rank": rank,
        "straggler_sleep_ms": sleep_ms,
        "straggler_steps": [first, last] if args.straggler else None,
        "slept_ms": slept_ms,
    }


if __name__ == "__main__":
    sys.exit(main())
