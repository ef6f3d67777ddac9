#!/usr/bin/env python3
"""A JAX training loop: a jitted MLP train step (forward, grad, Adam written out in jax.numpy), with the loss
read on the host every 10 steps. XLA may run each step's executable as CUDA graphs (command buffers).

  jax_mlp.py [--steps N]     prints FP8SCOPE_GROUND_TRUTH
"""

import argparse
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def init(key, sizes):
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (a, b)) * (1.0 / a) ** 0.5, jnp.zeros((b,))))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), axis=-1))


@jax.jit
def train_step(params, m, v, t, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    t = t + 1
    m = jax.tree_util.tree_map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
    v = jax.tree_util.tree_map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
    params = jax.tree_util.tree_map(
        lambda p, a, b: p - 1e-3 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8), params, m, v)
    return params, m, v, t, loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    key = jax.random.PRNGKey(0)
    params = init(key, [1024, 2048, 2048, 2048, 1000])
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.float32)
    x = jax.random.normal(key, (256, 1024))
    y = jax.random.randint(key, (256,), 0, 1000)
    losses = []
    for step in range(args.steps):
        common.mark_step(step)
        params, m, v, t, loss = train_step(params, m, v, t, x, y)
        if step % 10 == 9:
            losses.append(float(loss))  # a host sync every 10 steps
    jax.block_until_ready(params)
    common.print_truth("jax_mlp", args.steps, final_loss=float(loss), devices=str(jax.devices()))


if __name__ == "__main__":
    main()
