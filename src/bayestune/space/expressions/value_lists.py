"""T1 ``Values`` expressions: the Python list a tuning parameter's values are written as."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from bayestune.space.expressions.compiler import MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH
from bayestune.space.expressions.runtime import COMPARISONS
from bayestune.space.inference import is_number

__all__ = ["T1_MAX_VALUES", "ValueListEvaluator", "evaluate_value_list"]

#: Longest value list a T1 ``Values`` expression may produce, and the most list elements it
#: may build on the way (so that a comprehension of large lists cannot exhaust memory).
T1_MAX_VALUES = 1_000_000


def _concatenate(items: Any, start: Any = 0) -> Any:
    """``sum`` for T1 lists: concatenating lists in linear time (the builtin copies the growing
    list at every step, quadratic in the number of pieces); numbers are summed as usual."""
    if not isinstance(start, list):
        return sum(items, start)
    out = list(start)
    for item in items:
        if not isinstance(item, list):
            raise ValueError(f"sum() of lists met {item!r}")
        out.extend(item)
        if len(out) > T1_MAX_VALUES:
            raise ValueError(f"the expression produces more than {T1_MAX_VALUES:,} values")
    return out


class ValueListEvaluator:
    """Evaluate a T1 ``Values`` text such as ``"[32 * i for i in range(1, 32)]"`` without
    ``eval``: literals, arithmetic, list concatenation/repetition, comprehensions and a
    handful of pure builtins; anything else is rejected.

    Why not the constraint compiler: a value list is plain Python evaluated once to a list of
    scalars, with comprehensions, list literals, ``range`` and loop variables, all of which the
    constraint grammar refuses because its closures work on numpy columns of N rows and must
    keep every value a number, text or permutation column. What the two share is the parse
    limits (:data:`MAX_EXPRESSION_LENGTH`, :data:`MAX_NESTING_DEPTH`) and ``ast.parse`` as the
    only way in; the size of the result is bounded by :data:`T1_MAX_VALUES`.
    """

    _BINOPS: dict[type, Callable[[Any, Any], Any]] = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod,
        ast.Pow: operator.pow,
    }
    _CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
        **COMPARISONS,
        ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b,
    }
    _FUNCS: dict[str, Callable[..., Any]] = {
        "range": range,
        "list": list,
        "tuple": list,
        "sorted": sorted,
        "int": int,
        "float": float,
        "round": round,
        "abs": abs,
        "min": min,
        "max": max,
        "len": len,
        "sum": _concatenate,
    }

    def __init__(self) -> None:
        self.steps = 0

    def run(self, text: str) -> list[Any]:
        """The list ``text`` spells; SyntaxError or ValueError (TypeError, ZeroDivisionError,
        OverflowError from the arithmetic itself) otherwise."""
        if len(text) > MAX_EXPRESSION_LENGTH:
            raise ValueError(f"longer than the {MAX_EXPRESSION_LENGTH}-character limit ({len(text)} characters)")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except (RecursionError, MemoryError):
            raise ValueError("nested too deeply to parse") from None
        value = self.eval(tree.body, {})
        if isinstance(value, (range, tuple)):
            value = list(value)
        if not isinstance(value, list):
            raise ValueError(f"expected a list of values, but the expression gives {value!r}")
        return value

    def _tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > T1_MAX_VALUES:
            raise ValueError(f"the expression produces more than {T1_MAX_VALUES:,} values")

    def _size_ok(self, value: Any) -> Any:
        if isinstance(value, (list, range)) and len(value) > T1_MAX_VALUES:
            raise ValueError(f"the expression produces more than {T1_MAX_VALUES:,} values")
        if isinstance(value, list):
            self._tick(len(value))  # every built list counts against the element budget
        return value

    def eval(self, node: ast.AST, env: dict[str, Any], depth: int = 0) -> Any:
        if depth > MAX_NESTING_DEPTH:
            raise ValueError(f"nested more than {MAX_NESTING_DEPTH} levels deep")
        depth += 1
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float, str, bool)):
                return node.value
            raise ValueError(f"unsupported constant {node.value!r}")
        if isinstance(node, (ast.List, ast.Tuple)):
            self._tick(len(node.elts))
            return [self.eval(e, env, depth) for e in node.elts]
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise ValueError(f"unknown name {node.id!r}")
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand, env, depth)
            if isinstance(node.op, ast.USub) and is_number(v):
                return -v
            if isinstance(node.op, ast.UAdd) and is_number(v):
                return +v
            if isinstance(node.op, ast.Not):
                return not v
            raise ValueError(f"unsupported unary operation on {v!r}")
        if isinstance(node, ast.BinOp):
            op = self._BINOPS.get(type(node.op))
            if op is None:
                raise ValueError(f"unsupported operator {type(node.op).__name__}")
            a, b = self.eval(node.left, env, depth), self.eval(node.right, env, depth)
            if isinstance(node.op, ast.Pow) and (not is_number(b) or abs(b) > 64 or (is_number(a) and abs(a) > 2**32)):
                raise ValueError(f"power {a!r} ** {b!r} is out of range")
            if isinstance(node.op, ast.Mult) and (isinstance(a, (list, str)) or isinstance(b, (list, str))):
                n = b if isinstance(a, (list, str)) else a
                seq = a if isinstance(a, (list, str)) else b
                if not isinstance(n, int) or len(seq) * max(n, 0) > T1_MAX_VALUES:
                    raise ValueError("repetition is out of range")
            return self._size_ok(op(a, b))
        if isinstance(node, ast.BoolOp):
            vals = [self.eval(v, env, depth) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Compare):
            left = self.eval(node.left, env, depth)
            for op_node, comp in zip(node.ops, node.comparators):
                right = self.eval(comp, env, depth)
                if not self._CMPOPS[type(op_node)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.eval(node.test, env, depth) else node.orelse, env, depth)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in self._FUNCS or node.keywords:
                raise ValueError(f"unsupported call {ast.unparse(node)!r}")
            args = [self.eval(a, env, depth) for a in node.args]
            if node.func.id == "range":
                if not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
                    raise ValueError(f"range() needs integers, but got {args!r}")
            return self._size_ok(self._FUNCS[node.func.id](*args))
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            out: list[Any] = []
            self._comprehension(node.elt, node.generators, 0, env, out, depth)
            return out
        raise ValueError(f"unsupported syntax {type(node).__name__}")

    def _comprehension(
        self, elt: ast.AST, gens: list[ast.comprehension], i: int, env: dict[str, Any], out: list[Any], depth: int
    ) -> None:
        if i == len(gens):
            self._tick()
            out.append(self.eval(elt, env, depth))
            return
        gen = gens[i]
        if not isinstance(gen.target, ast.Name) or gen.is_async:
            raise ValueError("only `for name in ...` comprehensions are supported")
        for item in self.eval(gen.iter, env, depth):
            self._tick()
            inner = {**env, gen.target.id: item}
            if all(self.eval(cond, inner, depth) for cond in gen.ifs):
                self._comprehension(elt, gens, i + 1, inner, out, depth)


def evaluate_value_list(text: str) -> list[Any]:
    """The list of values ``text`` spells (see :class:`ValueListEvaluator`)."""
    return ValueListEvaluator().run(text)
