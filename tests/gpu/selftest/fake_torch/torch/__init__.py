"""Just enough of a `torch` module for run_all.py's preflight probe, so that the self-test exercises the steps
that need PyTorch (with fake_train.py standing in for train.py). Workloads that really use torch fail on it."""

__version__ = "0.0-fake"


class version:  # noqa: N801 (mirrors torch.version)
    cuda = "0.0"


class cuda:  # noqa: N801 (mirrors torch.cuda)
    @staticmethod
    def is_available():
        return True
