"""The peers' own files are data for the tests in tests/peers/, not tests of this project."""

collect_ignore_glob = ["*"]
