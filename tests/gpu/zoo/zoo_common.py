"""What the zoo's Python workloads share: step markers and the truth line come from tests/gpu/realjobs/common.py
(imported, not copied); this adds the zoo's truth fields, a step clock, two small models and the repository's paths.

Every workload marks the start of each step with begin_step(clock, i) (fp8scope.step(i) through common.mark_step,
then the clock: a CUDA event, or time.perf_counter() in loops that end each step with a host sync), ends with
clock.finish() (one synchronize, after the loop) and prints one FP8SCOPE_GROUND_TRUTH line last through truth(), with
the fields tests/gpu/README.md ("The zoo") defines: workload, steps, pattern, planted, measured, straggler, drift,
recipe, pair, rank, world_size. A field that does not apply is left out, never guessed.

Importing this module imports torch (every workload that uses it trains with PyTorch) and initializes no CUDA.
"""

import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
REALJOBS = os.path.join(REPO, "tests", "gpu", "realjobs")
SAMPLES_TORCH = os.path.join(REPO, "samples", "torch")
sys.path.insert(0, REALJOBS)
import common  # noqa: E402  (tests/gpu/realjobs/common.py: mark_step, print_truth, fail)

import torch  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

# The analyzer leaves the first two steps out as warm-up (docs/analysis.md); the measured medians do the same.
WARMUP_STEPS = 2


class StepClock:
    """Each step's start, and once more after the last step: intervals between step starts.

    host=False: CUDA events (the GPU's view: when the stream reached each step's start; at the host's pace when
    the loop is launch- or host-bound); recording one is no host sync, but it is a CUDA call. host=True:
    time.perf_counter(), no CUDA call at all, for loops whose steps end in a host sync anyway (then the two views
    agree) and whose planted host stall must stay free of CUDA calls. finish() synchronizes once, after the loop."""

    def __init__(self, steps, host=False):
        self.host = host
        self.events = [] if host else [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        self.times = []
        self.recorded = 0

    def mark(self, step):
        if self.host:
            self.times.append(time.perf_counter())
        else:
            self.events[step].record()
        self.recorded = step + 1

    def finish(self):
        if self.host:
            torch.cuda.synchronize()
            self.times.append(time.perf_counter())
            return [(b - a) * 1e3 for a, b in zip(self.times[:-1], self.times[1:])]
        self.events[self.recorded].record()
        torch.cuda.synchronize()
        return [self.events[i].elapsed_time(self.events[i + 1]) for i in range(self.recorded)]


def begin_step(clock, step, marker_ns=None):
    """The start of step `step`: the fp8scope marker first (a no-op untraced), then the clock. With a list
    `marker_ns`, time.perf_counter_ns() taken right after the marker call is appended to it (before the clock's own
    CUDA event, if any): the host time each marker was set, for marker_fields()."""
    common.mark_step(step)
    if marker_ns is not None:
        marker_ns.append(time.perf_counter_ns())
    clock.mark(step)


def marker_fields(marker_ns):
    """The truth fields that say when each marker was set (issue 42: the analyzer is judged with the job's markers
    and without them): `marker_host_ns`, one time.perf_counter_ns() per step taken right after its marker, and
    `marker_clock`. The clock's origin is arbitrary: only the spacing is meaningful; the trace's marker rows align it."""
    return {"marker_host_ns": list(marker_ns), "marker_clock": "perf_counter_ns"}


def median_after_warmup(values_ms):
    """Median of the values after the warm-up steps (of all of them when there are too few)."""
    kept = values_ms[WARMUP_STEPS:] if len(values_ms) > 2 * WARMUP_STEPS else values_ms
    return statistics.median(kept) if kept else None


def ms(seconds):
    return [s * 1e3 for s in seconds]


def truth(workload, steps, pattern, step_ms, planted=None, measured=None, recipe="none", **fields):
    """Prints the zoo's FP8SCOPE_GROUND_TRUTH line (through common.print_truth) as the last line of stdout.

    step_ms: the clock's per-step times; measured.median_step_ms is their median after the warm-up steps.
    fields: straggler, drift, pair, rank, world_size and anything else the workload measured or planted."""
    measured = dict(measured or {})
    if not common.markers_on():
        planted = dict(planted or {}, markers="none")
    if step_ms:
        measured.setdefault("median_step_ms", median_after_warmup(step_ms))
        measured.setdefault("median_from_step", WARMUP_STEPS if len(step_ms) > 2 * WARMUP_STEPS else 0)
    extra = {"pattern": pattern, "planted": planted or {}, "measured": measured, "recipe": recipe,
             "step_ms": [round(t, 4) for t in step_ms] if step_ms else None,
             "torch_version": torch.__version__,
             "device": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    extra.update({k: v for k, v in fields.items() if v is not None or k == "straggler"})
    sys.stdout.flush()
    common.print_truth(workload, steps, None, **extra)


def mlp(d_in, d_hidden, d_out, blocks, dtype=torch.bfloat16):
    """Linear + GELU blocks, then a Linear: the zoo's plain model (parameters in `dtype`, on the GPU)."""
    layers, width = [], d_in
    for _ in range(blocks):
        layers += [torch.nn.Linear(width, d_hidden, dtype=dtype), torch.nn.GELU()]
        width = d_hidden
    layers.append(torch.nn.Linear(width, d_out, dtype=dtype))
    return torch.nn.Sequential(*layers).cuda()


class TinyLM(torch.nn.Module):
    """A small language model: embedding, nn.TransformerEncoderLayer blocks (bf16, no dropout), a linear head.
    checkpoint=True wraps each block in torch.utils.checkpoint (use_reentrant=False): its forward runs again in
    the backward pass."""

    def __init__(self, vocab=4096, d=256, heads=4, layers=2, checkpoint=False):
        super().__init__()
        self.vocab = vocab
        self.checkpoint = checkpoint
        self.embed = torch.nn.Embedding(vocab, d, dtype=torch.bfloat16)
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, dtype=torch.bfloat16)
            for _ in range(layers))
        self.head = torch.nn.Linear(d, vocab, dtype=torch.bfloat16)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            if self.checkpoint:
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(x)

    def loss(self, tokens):
        """Next-token cross-entropy of a (batch, seq + 1) tensor of token ids."""
        logits = self(tokens[:, :-1])
        return torch.nn.functional.cross_entropy(logits.float().reshape(-1, self.vocab), tokens[:, 1:].reshape(-1))


def teacher_batches(rows, d, classes, count=4, seed=1):
    """A learnable task: `count` batches of `rows` random inputs (BF16) with labels from a fixed random teacher
    (d x classes), drawn from one CUDA generator seeded `seed`, so that both precisions of a pair see the same data."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    teacher = torch.randn(d, classes, device="cuda", generator=g)
    batches = []
    for _ in range(count):
        x = torch.randn(rows, d, device="cuda", generator=g)
        batches.append((x.to(torch.bfloat16), (x @ teacher).argmax(dim=-1)))
    return batches


def require_cuda(name):
    if not torch.cuda.is_available():
        print(f"{name}: no CUDA device; exiting with code 77", file=sys.stderr)
        sys.exit(77)
