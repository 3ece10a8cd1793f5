"""``python -m bayestune`` and the ``bayestune`` script: the command line.

Why this module and not ``bayestune.cli:main`` as the script's entry point: the command line's
imports take a moment, and a Ctrl-C while they run should end the command as an interrupt (exit
130, one line), not with a traceback from inside an import.
"""

import sys

#: The exit status of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT), as a shell reports it.
EXIT_INTERRUPTED = 130


def run() -> None:
    try:
        from bayestune.cli import main

        main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
