"""``python -m bayestune.cli``: the same command line as the ``bayestune`` script."""

from bayestune.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
