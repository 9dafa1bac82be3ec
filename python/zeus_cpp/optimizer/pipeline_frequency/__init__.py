"""Perseus's pipeline frequency optimizer (as `zeus.optimizer.pipeline_frequency`).

PipelineFrequencyOptimizer: the client of one pipeline rank (the hooks of a training loop).
measure_p2p_power: the GPU power while blocked on a P2P receive, for `zeus pfo plan --p2p-power`.
"""

from zeus_cpp.optimizer.pipeline_frequency.optimizer import PipelineFrequencyOptimizer
from zeus_cpp.optimizer.pipeline_frequency.p2p_power import measure_p2p_power

__all__ = ["PipelineFrequencyOptimizer", "measure_p2p_power"]
