"""Under torchrun the training loop uses DistributedDataParallel and ends where one process does.

Two CPU processes (gloo) each train on half of every global batch; DDP averages their gradients,
which equals the gradient of the mean loss over the whole batch, so the final weights match a
single-process run up to floating-point summation order.
"""

import os
import socket
import subprocess
import sys

import torch
from torch import nn

from ponder.runner.runs import Run
from ponder.runner.training import TrainConfig, train_run

CONFIG = TrainConfig(steps=20, batch_size=32, lr=1e-2, seed=1, checkpoint_every=7, log_every=5)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))


def batches(step: int):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(CONFIG.batch_size, 6, generator=g)
    return x, (x[:, :2] * x[:, 2:4]).sign().clamp(min=0).long()[:, 0]


def loss_fn(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def ddp_run() -> Run:
    return Run("ddp-toy", {"train": CONFIG.as_dict()}, "smoke", code=["ponder.tasks.cpvr"])


def test_two_process_ddp_matches_one_process(tmp_path, monkeypatch):
    env = {**os.environ, "PONDER_RESULTS": str(tmp_path / "ddp"), "OMP_NUM_THREADS": "1"}
    with socket.socket() as free:  # a port no other test holds (a fixed one can be taken on a busy machine)
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={port}", __file__]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "ddp"))
    assert ddp_run().done
    distributed = ddp_run().load_model(make_model())
    monkeypatch.setenv("PONDER_RESULTS", str(tmp_path / "single"))
    single, _ = train_run(ddp_run(), make_model, loss_fn, batches, CONFIG)
    for a, b in zip(distributed.state_dict().values(), single.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":  # each torchrun process
    train_run(ddp_run(), make_model, loss_fn, batches, CONFIG)
    torch.distributed.barrier()  # leave together: a rank that tears down while the other is still writing can abort it
    # exit without running destructors: gloo's threads, torn down at interpreter exit, can abort a rank on a busy
    # machine ("terminate called without an active exception", SIGABRT) after its run is written
    os._exit(0)
    torch.distributed.destroy_process_group()
