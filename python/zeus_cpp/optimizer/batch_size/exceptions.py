"""Errors of the batch-size optimizer client (as `zeus.optimizer.batch_size.exceptions`).

Errors the service answers with keep their code's class (NotFoundError for an unknown job,
InvalidArgumentError for a bad spec or a conflicting job, UnavailableError when the server
cannot be reached); the classes here are the client's own.
"""

from zeus_cpp import ZeusError


class ZeusBSOError(ZeusError):
    """Base class of the batch-size optimizer client's errors."""


class ZeusBSOConfigError(ZeusBSOError):
    """The job cannot be configured (e.g. no GPU to train on)."""


class ZeusBSOOperationOrderError(ZeusBSOError):
    """Methods were called out of order (e.g. on_evaluate before get_batch_size)."""


class ZeusBSOBadOperationError(ZeusBSOError):
    """The operation is not allowed here (e.g. a batch size asked for by rank != 0)."""


class ZeusBSOTrainFailError(ZeusBSOError):
    """The trial ended without converging; relaunch to try another batch size."""


class ZeusBSORuntimError(ZeusBSOError):
    """The service answered something the client cannot use (spelling as in the Python Zeus)."""


__all__ = [
    "ZeusBSOError",
    "ZeusBSOConfigError",
    "ZeusBSOOperationOrderError",
    "ZeusBSOBadOperationError",
    "ZeusBSOTrainFailError",
    "ZeusBSORuntimError",
]
