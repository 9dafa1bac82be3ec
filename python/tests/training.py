"""A small real PyTorch training job whose step time depends on the GPU's power limit.

The fake NVML draws min(power_draw, limit) watts, so energy already falls with the limit; this
job makes time rise below a knee, like a real GPU: step_time = BASE_S at limits >= 200 W and
BASE_S * (200 / limit) ** 0.8 below. With a 300 W draw and candidates 300..100 W (50 W steps):
  energy per step ~ limit x time: 300, 250, 200, 189, 174 (x BASE_S)  -> Energy() picks 100 W
  zeus cost (eta 0.5, MaxPower 300 W): 300, 275, 250, 283, 348        -> ZeusCost picks 200 W
  slowdown vs 300 W: 1, 1, 1, 1.26, 1.74             -> MaxSlowdownConstraint(1.4) picks 150 W
Steps are paced against a deadline (each one ends step_time after the previous one), so the
loop's own overhead between steps does not blur the model.
"""

from __future__ import annotations

import time

import torch

BASE_S = 0.05


def step_time_s(limit_w: float) -> float:
    """Seconds one training step takes at a power limit."""
    return BASE_S if limit_w >= 200 else BASE_S * (200.0 / limit_w) ** 0.8


class Job:
    """Linear classifier on synthetic data; one optimiser step per batch."""

    def __init__(self, seed: int = 0, batch_size: int = 16) -> None:
        torch.manual_seed(seed)
        self.model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(768, 16)
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).long()
        self.batch_size = batch_size
        self._deadline = 0.0

    def batches(self, limit: int = 0):
        """The epoch's (input, label) batches (the first `limit` ones when limit > 0)."""
        count = len(self.x) if limit <= 0 else limit * self.batch_size
        for i in range(0, count, self.batch_size):
            yield self.x[i : i + self.batch_size], self.y[i : i + self.batch_size]

    def step(self, batch, limit_w: float) -> float:
        """One real training step, ending step_time_s(limit_w) after the previous one ended."""
        now = time.perf_counter()
        if now - self._deadline > BASE_S:  # first step, or the loop paused: restart pacing
            self._deadline = now
        self._deadline += step_time_s(limit_w)
        x, y = batch
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        remaining = self._deadline - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)
        return float(loss)

    def accuracy(self) -> float:
        """Accuracy on the training data."""
        with torch.no_grad():
            return float((self.model(self.x).argmax(dim=1) == self.y).float().mean())
