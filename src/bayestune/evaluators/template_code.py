"""Whether a placeholder of a command template lands where a program runs it as code.

bayestune quotes every value as one shell word, so the shell itself never interprets a value.
What quoting cannot stop is a program that takes one of its arguments as code: ``sh -c``,
``eval``, ``trap``, ``awk``'s program, ``python -c``, ``perl -e``, a shell reading a script from
a pipe or a here-string. A list of bad spellings cannot be complete (``/bin/sh -c``,
``bash -lc``, ``env timeout 5 sh -ec``, ``find . -exec sh -c``...), so this module reads the
template's structure instead: it splits the text before the placeholder into commands with the
standard library's shell lexer (:mod:`shlex`, punctuation aware), follows the wrappers that run
the rest of their words as a command (``env``, ``timeout``, ``nice``, ``exec``, ``command``,
``xargs``, ``find -exec`` ...), reads option bundles (``-ec`` holds ``-c``), and decides from the
command that receives the placeholder — and, for a pipeline, from the commands its output feeds.

What is guaranteed (docs/reliability.md): a placeholder is refused when it is the code operand
of a shell (``-c``), of ``eval`` or ``trap``, of an interpreter's code option (``python -c``,
``perl/ruby/node -e``, ``php -r``, ``Rscript -e``), ``awk``'s program, a here-string or
here-document fed to a shell or interpreter, or any word of a command whose output is piped
into a shell or an interpreter reading its program from standard input — whatever wrappers,
paths or option bundles stand before it. A template is otherwise free: a value is then one
argument of a program, never code, unless that program itself runs its arguments (a script of
the user's doing ``eval "$1"``: no static check can see into it).
"""

from __future__ import annotations

import os
import shlex

#: Programs that run a shell script; ``-c`` (alone or in a bundle such as ``-ec``) makes their first operand code.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "busybox"})
#: Interpreters and the options whose value is code.
CODE_OPTIONS = {
    "python": {"-c"},
    "python2": {"-c"},
    "python3": {"-c"},
    "pypy": {"-c"},
    "pypy3": {"-c"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
    "node": {"-e", "--eval", "-p", "--print"},
    "nodejs": {"-e", "--eval", "-p", "--print"},
    "php": {"-r"},
    "Rscript": {"-e"},
    "lua": {"-e"},
    "tclsh": set(),
    "osascript": {"-e"},
    "jq": set(),
}
#: awk-like programs: the first operand is the program unless ``-f`` names a file.
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
#: Words that run the rest of the line as a command, with how many of their own operands follow
#: their options (``timeout 5 cmd``: one, the duration).
WRAPPERS = {
    "exec": 0,
    "command": 0,
    "builtin": 0,
    "nohup": 0,
    "setsid": 0,
    "time": 0,
    "nice": 0,
    "ionice": 0,
    "chrt": 1,
    "taskset": 1,
    "timeout": 1,
    "stdbuf": 0,
    "env": 0,
    "sudo": 0,
    "doas": 0,
    "xargs": 0,
    "unbuffer": 0,
    "strace": 0,
    "ltrace": 0,
    "valgrind": 0,
    "numactl": 0,
    "hyperfine": 0,
    "perf": 0,
}
#: Options of wrappers that take a separate value (``nice -n 5``, ``timeout -s KILL``).
WRAPPER_VALUE_OPTIONS = frozenset({"-n", "-s", "-k", "-u", "-g", "-c", "-p", "-o", "-e", "-i", "-I", "-L", "-d", "-P"})
#: Reserved words that may open a command without being one.
RESERVED = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "time", "(", "in"})
#: Operators that end one command and start the next.
SEPARATORS = frozenset({";", "&&", "||", "&", "|", "|&", "(", ")", "\n", ";;", "{", "}"})
_MARK = "\x00"


def _words(text: str) -> list[str]:
    """The shell words and operators of ``text`` (quotes removed), newlines kept as operators;
    unbalanced quotes (a template cut at a placeholder) end the text."""
    out: list[str] = []
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        for word in lexer:
            out.append(word)
    except ValueError:
        pass  # an open quote: what follows is inside it, decided by the caller's scanner
    return out


def _program(word: str) -> str:
    return os.path.basename(word)


def _code_in_command(words: list[str]) -> str | None:
    """Why the last word of this one command (the placeholder) is code, or None."""
    i = 0
    while i < len(words) - 1:
        word = words[i]
        if word in RESERVED or ("=" in word and word.split("=", 1)[0].isidentifier()):
            i += 1  # a reserved word, or a variable assignment before the command
            continue
        name = _program(word)
        if name in WRAPPERS:
            i += 1
            while i < len(words) - 1 and (words[i].startswith("-") or (name == "env" and "=" in words[i])):
                i += 2 if words[i] in WRAPPER_VALUE_OPTIONS and name != "env" else 1
            i += WRAPPERS[name]
            continue
        if name in ("eval", "trap"):
            return f"an argument of {name}, which runs it as shell code"
        if name == "find" and any(w in ("-exec", "-execdir", "-ok", "-okdir") for w in words[i:-1]):
            start = max(j for j, w in enumerate(words[:-1]) if w in ("-exec", "-execdir", "-ok", "-okdir"))
            return _code_in_command(words[start + 1 :])
        return _code_operand(name, words[i + 1 :])
    return None


def _code_operand(name: str, args: list[str]) -> str | None:
    """Why the last of ``args`` (the placeholder) is code for program ``name``, or None."""
    before = args[:-1]
    if name in SHELLS:
        for j, arg in enumerate(before):
            if arg == "--" or not arg.startswith("-") or arg.startswith("--"):
                if arg.startswith("--") and arg != "--":
                    continue
                return None  # an operand came first: a script file, or the placeholder is an argument after it
            if "c" in arg[1:]:  # -c, -ec, -lc ...: the next operand is the script
                rest = [a for a in before[j + 1 :] if not a.startswith("-")]
                return None if rest else f"the script of {name} -c"
        return None
    if name in AWKS:
        skip = False
        for arg in before:
            if skip:
                skip = False
            elif arg in ("-F", "-v"):
                skip = True
            elif arg == "-f" or arg.startswith("-f"):
                return None  # the program comes from a file
            elif not arg.startswith("-") or arg == "--":
                return None  # the program came before the placeholder
        return f"the program of {name}"
    options = CODE_OPTIONS.get(name)
    if options is None:
        return None
    if before and before[-1] in options:
        return f"the code of {name} {before[-1]}"
    if before and name.startswith("python") and before[-1].startswith("-") and before[-1].endswith("c"):
        return f"the code of {name} {before[-1]}"  # python -Ic, -Bc ...
    return None


def _reads_code_from_stdin(words: list[str]) -> str | None:
    """Whether this command is a shell or interpreter reading its program from standard input."""
    i = 0
    while i < len(words):
        word = words[i]
        if word in RESERVED or ("=" in word and word.split("=", 1)[0].isidentifier()):
            i += 1
            continue
        name = _program(word)
        if name in WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or (name == "env" and "=" in words[i])):
                i += 2 if words[i] in WRAPPER_VALUE_OPTIONS and name != "env" else 1
            i += WRAPPERS[name]
            continue
        operands = [w for w in words[i + 1 :] if not w.startswith("-") or w == "-"]
        if name in SHELLS and (not operands or operands[0] == "-" or "-s" in words[i + 1 :]):
            if not any("c" in w[1:] for w in words[i + 1 :] if w.startswith("-") and not w.startswith("--")):
                return name
        if (name in CODE_OPTIONS or name in AWKS) and (not operands or operands[0] == "-"):
            if not any(w in CODE_OPTIONS.get(name, ()) for w in words[i + 1 :]):
                return name
        return None
    return None


def _commands(words: list[str]) -> list[tuple[str, list[str]]]:
    """``words`` cut into commands, each with the separator before it."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for word in words:
        if word in SEPARATORS:
            out.append((word, []))
        else:
            out[-1][1].append(word)
    return out


def code_context(before: str, after: str) -> str | None:
    """Why a placeholder standing between ``before`` and ``after`` (the template's text, other
    placeholders as plain words) would be run as code, or None when it is one plain argument."""
    words = _words(before + _MARK)
    if not words or _MARK not in words[-1]:
        return None  # inside quotes or a construct the caller's scanner decides
    commands = _commands(words[:-1] + [_MARK])
    current = commands[-1][1]
    if len(current) >= 2 and current[-2] == "<<<":
        runner = _reads_code_from_stdin(current[:-2])
        if runner:
            return f"a here-string fed to {runner}, which runs it as code"
        return None
    why = _code_in_command(current)
    if why:
        return why
    rest = _commands(_words(after))
    for separator, command in rest[1:]:
        if separator not in ("|", "|&"):
            break
        runner = _reads_code_from_stdin(command)
        if runner:
            return f"in a command whose output is piped into {runner}, which runs it as code"
    return None
