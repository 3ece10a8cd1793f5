"""``python -m bayestune``: the same command line as the ``bayestune`` script."""

from bayestune.cli import main

if __name__ == "__main__":
    main()
