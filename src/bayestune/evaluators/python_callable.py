"""In-process black boxes: a Python function called with the configuration dict.

The function may return a number (one objective), a sequence (one value per objective, in
order), a mapping (objective names, extra metrics, optional ``"feasible"``/``"Valid"``) or a
:class:`~bayestune.trial.Result`; see :func:`bayestune.trial.coerce_result`.

There is no timeout in-process: a Python call cannot be interrupted safely from outside.
A black box that may hang or crash the interpreter (segfaulting extensions, runaway
compilers) belongs in a :class:`~bayestune.evaluators.command.CommandEvaluator`, whose
process group is killed when its time is up.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator, describe_exception
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, Result, coerce_result

logger = logging.getLogger(__name__)


def load_callable(target: str, base_dir: str | Path | None = None) -> Callable[..., Any]:
    """The function named by ``"package.module:function"`` or ``"path/to/file.py:function"``.

    A file path is resolved against ``base_dir`` (the scenario's directory; default: the
    current directory) and imported under a private module name, so it neither shadows nor
    is shadowed by an installed module of the same name. While the file runs its top level,
    its directory is first on ``sys.path`` so it can import its sibling modules.
    ``function`` may be dotted (``"module:Class.method"``). A dotted module name that is not
    importable but exists as a file under ``base_dir`` is loaded from there.

    Raises EvaluationError naming the target when the module cannot be imported, lacks the
    attribute, or the attribute is not callable.
    """
    if not isinstance(target, str) or target.count(":") < 1:
        raise EvaluationError(
            f"python black box target must look like 'package.module:function' or "
            f"'path/to/file.py:function', but got {target!r}"
        )
    module_part, _, attr_path = target.rpartition(":")
    module_part, attr_path = module_part.strip(), attr_path.strip()
    if not module_part or not attr_path:
        raise EvaluationError(
            f"python black box target {target!r} needs both a module (or .py file) and a function name, "
            "as in 'package.module:function'"
        )
    base = Path(base_dir) if base_dir is not None else Path.cwd()

    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        module = _import_file(base / module_part, target)
    else:
        module = _import_module(module_part, base, target)

    obj: Any = module
    walked = []
    for name in attr_path.split("."):
        walked.append(name)
        try:
            obj = getattr(obj, name)
        except AttributeError:
            available = sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n)))
            raise EvaluationError(
                f"python black box {target!r}: {module_part!r} has no attribute {'.'.join(walked)!r}; "
                f"callables it defines: {available}"
            ) from None
    if not callable(obj):
        raise EvaluationError(
            f"python black box {target!r}: {attr_path!r} is not callable (it is a {type(obj).__name__})"
        )
    return obj


def _import_module(name: str, base: Path, target: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Not installed: maybe a module file next to the scenario ("blackbox:run").
        candidate = base.joinpath(*name.split(".")).with_suffix(".py")
        missing_itself = exc.name is not None and (name == exc.name or name.startswith(exc.name + "."))
        if missing_itself and candidate.is_file():
            return _import_file(candidate, target)
        raise EvaluationError(f"python black box {target!r}: cannot import module {name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any error in the user's module is a setup error
        raise EvaluationError(
            f"python black box {target!r}: importing {name!r} failed: {type(exc).__name__}: {exc}"
        ) from None


_IMPORT_LOCK = threading.RLock()


def _import_file(path: Path, target: str) -> Any:
    path = path.expanduser().resolve()
    if not path.is_file():
        raise EvaluationError(f"python black box {target!r}: file {str(path)!r} does not exist")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    module_name = f"_bayestune_blackbox_{digest}_{path.stem}"
    # One thread at a time: a module is registered before its code has run, so a second thread
    # (a Dask worker's, building its own evaluator) would otherwise get it half-initialised.
    with _IMPORT_LOCK:
        if module_name in sys.modules:
            return sys.modules[module_name]
        return _exec_file(path, module_name, target)


def _exec_file(path: Path, module_name: str, target: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EvaluationError(f"python black box {target!r}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered under the private name only: dataclasses, pickling and typing look modules
    # up in sys.modules by ``__name__``.
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        if not isinstance(exc, Exception):
            raise
        raise EvaluationError(
            f"python black box {target!r}: running {str(path)!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        try:
            sys.path.remove(str(path.parent))
        except ValueError:
            pass
    return module


class CallableEvaluator(Evaluator):
    """Calls ``fn(config)`` in this process; exceptions and bad return values become failures.

    No timeout (see the module docstring). ``KeyboardInterrupt`` still propagates, so
    Ctrl-C stops the run.
    """

    def __init__(
        self, fn: Callable[[dict[str, Any]], Any], objectives: Sequence[str], feasible_key: str | None = None
    ) -> None:
        if not callable(fn):
            raise EvaluationError(f"expected a callable black box, but got {fn!r}")
        super().__init__(objectives)
        self.fn = fn
        self.feasible_key = feasible_key

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        try:
            raw = self.fn(dict(config))  # a copy: the black box cannot alter the optimizer's record
        except (Exception, SystemExit) as exc:
            return Result.failure(describe_exception(exc), FailureKind.EXCEPTION)
        try:
            return coerce_result(raw, self.objectives, self.feasible_key)
        except Exception as exc:  # noqa: BLE001 - e.g. a mapping whose __iter__ raises
            return Result.failure(
                f"cannot read the black box's return value {raw!r}: {describe_exception(exc)}", FailureKind.PARSE
            )

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        return f"CallableEvaluator({name}, objectives={self.objectives})"
