# Present so that pytest puts the repository root on sys.path: the tests import `benchmarks`.
