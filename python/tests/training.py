"""A small real PyTorch training job whose step time depends on the GPU's power limit.

The fake NVML draws min(power_draw, limit) watts, so energy already falls with the limit; this
job makes time rise below a knee, like a real GPU: step_time = BASE_S at limits >= 200 W and
BASE_S * (200 / limit) ** 0.7 below. With a 300 W draw and candidates 300..100 W (50 W steps):
  energy per step ~ limit x time: 300, 250, 200, 183, 162 (x BASE_S)  -> Energy() picks 100 W
  zeus cost (eta 0.5, MaxPower 300 W): 600, 550, 500, 550, 650 (/2)    -> ZeusCost picks 200 W
  slowdown vs 300 W: 1, 1, 1, 1.22, 1.62             -> MaxSlowdownConstraint(1.4) picks 150 W
"""

from __future__ import annotations

import time

import torch

BASE_S = 0.02


def step_time_s(limit_w: float) -> float:
    """Seconds one training step takes at a power limit."""
    return BASE_S if limit_w >= 200 else BASE_S * (200.0 / limit_w) ** 0.7


class Job:
    """Linear classifier on synthetic data; one optimiser step per batch."""

    def __init__(self, seed: int = 0, batch_size: int = 16) -> None:
        torch.manual_seed(seed)
        self.model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(512, 16)
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).long()
        self.batch_size = batch_size

    def batches(self):
        """The epoch's (input, label) batches."""
        for i in range(0, len(self.x), self.batch_size):
            yield self.x[i : i + self.batch_size], self.y[i : i + self.batch_size]

    def step(self, batch, limit_w: float) -> float:
        """One real training step, stretched to the limit's step time."""
        start = time.perf_counter()
        x, y = batch
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        remaining = step_time_s(limit_w) - (time.perf_counter() - start)
        if remaining > 0:
            time.sleep(remaining)
        return float(loss)

    def accuracy(self) -> float:
        """Accuracy on the training data."""
        with torch.no_grad():
            return float((self.model(self.x).argmax(dim=1) == self.y).float().mean())
