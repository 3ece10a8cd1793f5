"""HyperMapper 2.0 / BaCO client-server mode: bayestune's optimizer behind the peers' stdin/stdout
exchange, so a client program that launched the peer's optimizer as a subprocess works by
changing only the command it launches (``bayestune serve SCENARIO``).

The exchange, as both peers speak it: the server writes ``Request N``, a header naming the input
parameters (in file order) and N rows of their values; the client answers with a header naming
the inputs, the objectives and, with the feasibility predictor, the feasible flag (in any
order) and N rows. The first request is the whole initial design, then one per iteration of
``evaluations_per_optimization_iteration`` configurations; ``End of HyperMapper`` ends the run
(BaCO writes the same line). Nothing else may reach stdout: the clients parse every line.

:class:`PeerSession` is the run both peers make, whoever answers: the resumed rows told first,
the budget as the peer counts it, the sample CSV rewritten as the answers arrive. The Python
drop-ins (:mod:`bayestune.peers`) drive it with a black-box function instead of the exchange.

Why not bayestune's own ``external`` evaluator (:mod:`bayestune.evaluators.external`): there
bayestune is the client that starts the black box; here the roles are reversed, the client
program owns the loop and starts the optimizer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TextIO

from bayestune.exceptions import BayestuneError
from bayestune.formatting import format_value
from bayestune.optimizer import Optimizer
from bayestune.scenario import Scenario
from bayestune.storage.csv_io import read_table
from bayestune.trial import Result

#: The line that ends a run (HyperMapper's; BaCO writes it too).
END_LINE = "End of HyperMapper"
#: Longest line read from the client (an answer row is a few hundred characters).
MAX_LINE_CHARS = 1_000_000

#: Answers to one request, in groups: the sample CSV is rewritten after each group.
Evaluate = Callable[[list[dict[str, Any]]], Iterable[Sequence[tuple[dict[str, Any], Result]]]]


def _cells(line: str) -> list[str]:
    """The cells of one answer line, split at commas outside parentheses (a permutation is written
    ``(0, 2, 1)``, as BaCO does), in one pass: time linear in the line whatever its commas."""
    cells, depth, start = [], 0, 0
    text = line.rstrip("\r\n")
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            cells.append(text[start:i].strip())
            start = i + 1
    cells.append(text[start:].strip())
    return cells


class PeerSession:
    """One run of a peer's file: ask, ``evaluate``, tell, until the budget or the time limit is spent.

    ``epoch_timestamps``: the sample CSV's timestamps in epoch milliseconds (both peers' client-server
    mode), else milliseconds since the start (their Python mode)."""

    def __init__(
        self,
        scenario: Scenario,
        evaluate: Evaluate,
        *,
        seed: int | None = None,
        write_samples: bool = True,
        epoch_timestamps: bool = False,
    ) -> None:
        self.parameters = list(scenario.space.parameters)
        self.resumed = scenario.peer_samples.resumed(self.parameters) if scenario.peer_samples is not None else []
        self.scenario, self.evaluate = _restart_pibo(scenario, len(self.resumed)), evaluate
        self.optimizer = Optimizer.from_scenario(self.scenario, seed=seed)
        self.samples = scenario.peer_samples if write_samples else None
        self.start_time = 0.0 if epoch_timestamps else None
        self.requests = 0

    def run(self) -> Optimizer:
        scenario, opt = self.scenario, self.optimizer
        for config, result in self.resumed:  # resume_optimization: the earlier evaluations first
            opt.tell(config, result)
        started = time.monotonic()
        budget = self._budget(len(self.resumed))
        if self.start_time is None:
            self.start_time = time.time()
        while opt.n_evaluated < budget:
            if scenario.time_limit is not None and time.monotonic() - started >= scenario.time_limit:
                break
            configs = opt.ask(int(min(self._request_size(), budget - opt.n_evaluated)))
            if not configs:
                break  # the space is exhausted
            self.requests += 1
            for group in self.evaluate(configs):
                for config, result in group:
                    opt.tell(config, result)
                if self.samples is not None:
                    self.samples.write(opt.trials, start_time=self.start_time)
        return opt

    def _budget(self, n_resumed: int) -> float:
        """The evaluations this run ends at. HyperMapper tops a resumed run up to its design and
        then runs all its optimization iterations again (bo.py); BaCO counts the resumed rows
        against its iterations, as ``Scenario.budget`` does."""
        scenario = self.scenario
        if scenario.budget is None:
            return float("inf")
        samples = scenario.peer_samples
        if n_resumed and samples is not None and samples.peer == "hypermapper":
            iterations = scenario.budget - scenario.design.size
            return max(n_resumed, scenario.design.size) + iterations
        return scenario.budget

    def _request_size(self) -> int:
        """The whole initial design first, as the peers ask for it; then one iteration's batch."""
        design = self.scenario.design.size - self.optimizer.n_evaluated
        if self.requests == 0 and design > 0:
            return design
        return self.scenario.batch or 1


def _restart_pibo(scenario: Scenario, n_resumed: int) -> Scenario:
    """HyperMapper counts piBO's ``iteration_number`` from 1 again after a resume (bo.py's main
    loop restarts it); BaCO continues it from the resumed rows, as the prior's ``design`` says."""
    prior = scenario.strategy_options.get("prior")
    samples = scenario.peer_samples
    if not n_resumed or not isinstance(prior, dict) or samples is None or samples.peer != "hypermapper":
        return scenario
    design = max(n_resumed, int(prior.get("design", 0)))
    return replace(scenario, strategy_options={**scenario.strategy_options, "prior": {**prior, "design": design}})


class ProtocolExchange:
    """The client-server exchange over ``reader``/``writer``: a request sent, its answers read."""

    def __init__(self, scenario: Scenario, reader: TextIO, writer: TextIO) -> None:
        self.scenario, self.reader, self.writer = scenario, reader, writer
        self.parameters = list(scenario.space.parameters)
        self.requests = 0
        samples = scenario.peer_samples
        self.flags = samples.flags if samples is not None else None

    def __call__(self, configs: list[dict[str, Any]]) -> list[list[tuple[dict[str, Any], Result]]]:
        self._send(configs)
        return [self._answers(configs)]

    def _send(self, configs: list[dict[str, Any]]) -> None:
        lines = [f"Request {len(configs)}", ",".join(p.name for p in self.parameters)]
        lines += [",".join(format_value(c[p.name]) for p in self.parameters) for c in configs]
        self.writer.write("\n".join(lines) + "\n")
        self.writer.flush()
        self.requests += 1

    def _answers(self, configs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Result]]:
        where = f"the client's answer to request {self.requests}"
        header = _cells(self._line(where, "its header"))
        rows = [(k + 2, _cells(self._line(where, f"row {k + 1} of {len(configs)}"))) for k in range(len(configs))]
        answers = read_table(
            where,
            header,
            rows,
            parameters=self.parameters,
            objectives=self.scenario.objective_names,
            feasible_column=self.scenario.feasible_output,
            flags=self.flags,
        )
        self._check_answers(where, header, rows, configs, answers)
        return answers

    def _check_answers(
        self,
        where: str,
        header: list[str],
        rows: list[tuple[int, list[str]]],
        configs: list[dict[str, Any]],
        answers: list[tuple[dict[str, Any], Result]],
    ) -> None:
        """The client answers exactly what was asked, and a row it calls valid carries its objectives."""
        space = self.scenario.space
        asked = {space.row_keys(space.to_matrix([space.validate_config(c)]))[0] for c in configs}
        feasible = self.scenario.feasible_output
        column = header.index(feasible) if feasible in header else None
        for (line, cells), (config, result) in zip(rows, answers):
            key = space.row_keys(space.to_matrix([space.validate_config(config)]))[0]
            if key not in asked:
                raise BayestuneError(f"{where}, line {line}: answers {config}, which was not requested")
            asked.discard(key)
            claims_valid = column is not None and (
                self.flags.read(cells[column]) if self.flags is not None else cells[column].lower() in ("true", "1")
            )
            if claims_valid and result.kind in ("parse", "missing"):
                raise BayestuneError(f"{where}, line {line}: a row marked valid with {result.error}")

    def _line(self, where: str, what: str) -> str:
        line = self.reader.readline(MAX_LINE_CHARS + 1)
        if not line:
            raise BayestuneError(f"{where}: the client closed its end before sending {what}")
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            raise BayestuneError(f"{where}: {what} is longer than {MAX_LINE_CHARS:,} characters")
        return line


def best_point_lines(scenario: Scenario, optimizer: Optimizer, *, client_server: bool) -> str:
    """HyperMapper's closing lines: "Best point found:", the inputs' and objective's names and
    their values, as its ``print_best`` asks ("auto": not in client-server mode); BaCO writes
    its best point only to its log. Empty when not asked, with several objectives or no feasible point."""
    samples = scenario.peer_samples
    wanted = samples is not None and (samples.print_best if samples.print_best is not None else not client_server)
    best = optimizer.best
    if not wanted or len(scenario.objectives) != 1 or best is None:
        return ""
    if samples is not None and samples.peer != "hypermapper" and client_server:
        return ""
    names = [*scenario.space.names, scenario.objectives[0].name]
    values = [*(best.config[n] for n in scenario.space.names), best.values[names[-1]]]
    return "Best point found:\n" + ",".join(names) + "\n" + ",".join(map(format_value, values)) + "\n\n"


def serve(
    scenario: Scenario, reader: TextIO, writer: TextIO, *, seed: int | None = None, write_samples: bool = True
) -> Optimizer:
    """Run ``scenario`` as the peers' client-server mode over ``reader``/``writer`` and return the
    optimizer; the peer's sample CSV (``scenario.peer_samples``, timestamps in epoch milliseconds
    as both peers write them in this mode) is rewritten after each request unless
    ``write_samples`` is False."""
    exchange = ProtocolExchange(scenario, reader, writer)
    session = PeerSession(scenario, exchange, seed=seed, write_samples=write_samples, epoch_timestamps=True)
    optimizer = session.run()
    writer.write(best_point_lines(scenario, optimizer, client_server=True) + END_LINE + "\n")
    writer.flush()
    return optimizer
