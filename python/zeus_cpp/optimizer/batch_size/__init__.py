"""The batch-size optimizer (as `zeus.optimizer.batch_size`): the client of `zeus serve`."""

from zeus_cpp.optimizer.batch_size.client import BatchSizeOptimizer
from zeus_cpp.optimizer.batch_size.common import JobSpec, ReportResponse, TrialId

__all__ = ["BatchSizeOptimizer", "JobSpec", "TrialId", "ReportResponse"]
