"""Genetic-algorithm baseline (the strongest non-BO method in Kernel Tuner's comparisons).

A steady-state GA driven by the history: the population is the ``population_size`` best
feasible configurations evaluated so far; each child comes from two parents picked by
tournament selection, uniform crossover per parameter (a permutation is inherited whole from
one parent or mixed by order crossover, OX1, on the order vectors), mutation by a random
``space.neighbours`` move, and repair of an infeasible child by resampling, from the
Chain-of-Trees, only the constraint groups it violates. Children already evaluated are
mutated further; if none is found the remainder is drawn uniformly from the unseen feasible
configurations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayestune.history import History, draw_unseen, top_up
from bayestune.space.parameters import Permutation
from bayestune.space.space import Space
from bayestune.strategies.base import Rule, Settings, Strategy, register

#: Neighbour moves tried on a child that was already evaluated before giving up on it.
MAX_EXTRA_MUTATIONS = 8


def order_crossover(order_a: np.ndarray, order_b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """OX1 on two order vectors (``order[k]`` = element at position ``k``): a random slice of
    ``order_a`` is kept in place, the remaining positions take the missing elements in the
    order they appear in ``order_b``."""
    n = len(order_a)
    if n < 2:
        return order_a.copy()
    i, j = sorted(rng.choice(n + 1, size=2, replace=False))
    child = np.full(n, -1, dtype=np.int64)
    child[i:j] = order_a[i:j]
    kept = set(order_a[i:j].tolist())
    fill = [e for e in order_b.tolist() if e not in kept]
    child[[k for k in range(n) if not i <= k < j]] = fill
    return child


def repair(space: Space, row: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A feasible row close to ``row``: each violated constraint group of the Chain-of-Trees is
    resampled uniformly over its feasible partial configurations; the rest is kept."""
    row = row.copy()
    if space.is_feasible(row.reshape(1, -1))[0]:
        return row
    if space.constraints:
        cot = space.chain_of_trees
        blocks = space.blocks(row.reshape(1, -1))
        for g in cot.groups:
            gb = {name: blocks[name] for name in g.names}
            ok = cot.group_contains(g, gb) if g.enumerated else cot.evaluate_group(g, gb)
            if not ok[0]:
                for name, block in cot.sample_group(g, rng, 1).items():
                    row[space.slices[name]] = block[0]
        if space.is_feasible(row.reshape(1, -1))[0]:
            return row
    return space.sample(1, rng, method="cot")[0]


@dataclass(frozen=True)
class GeneticSettings(Settings):
    """Options of the ``genetic`` strategy."""

    population_size: int = 20  # the best feasible evaluations that breed
    tournament_size: int = 3
    crossover_rate: float = 0.9
    mutation_rate: float = 0.3

    def rules(self) -> list[Rule]:
        return [
            (
                "population_size",
                isinstance(self.population_size, int) and self.population_size >= 2,
                "`population_size >= 2` (an integer)",
            ),
            (
                "tournament_size",
                isinstance(self.tournament_size, int) and self.tournament_size >= 1,
                "`tournament_size >= 1` (an integer)",
            ),
            ("crossover_rate", 0.0 <= self.crossover_rate <= 1.0, "`0 <= crossover_rate <= 1`"),
            ("mutation_rate", 0.0 <= self.mutation_rate <= 1.0, "`0 <= mutation_rate <= 1`"),
        ]


@register
class GeneticAlgorithm(Strategy):
    """Tournament selection, uniform/order crossover, neighbour mutation, Chain-of-Trees repair."""

    name = "genetic"
    settings_class = GeneticSettings
    settings: GeneticSettings

    # ---- operators ---------------------------------------------------------------------
    def _tournament(self, fitness: np.ndarray) -> int:
        k = min(self.settings.tournament_size, len(fitness))
        entrants = self.rng.choice(len(fitness), size=k, replace=False)
        return int(entrants[np.argmin(fitness[entrants])])

    def _crossover(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        child = a.copy()
        for p in self.space.parameters:
            s = self.space.slices[p.name]
            if isinstance(p, Permutation) and self.rng.random() < 0.5:
                order = order_crossover(np.argsort(a[s]), np.argsort(b[s]), self.rng)
                child[s] = np.argsort(order)
            elif self.rng.random() < 0.5:
                child[s] = b[s]
        return child

    def _mutate(self, row: np.ndarray) -> np.ndarray:
        neighbours = self.space.neighbours(row.reshape(1, -1), self.rng)
        if not len(neighbours):
            return row
        return neighbours[self.rng.integers(len(neighbours))]

    # ---- suggestion --------------------------------------------------------------------
    def suggest(self, history: History, n: int) -> np.ndarray:
        ok = history.feasible
        if ok.sum() < 2:
            return draw_unseen(self.space, history, n, self.rng)
        y = history.signed_Y()[ok, 0]
        order = np.argsort(y, kind="stable")[: self.settings.population_size]
        population, fitness = history.X[ok][order], y[order]
        seen = set(history.seen)
        children: list[np.ndarray] = []
        for _ in range(20 * n):
            if len(children) == n:
                break
            i = self._tournament(fitness)
            j = self._tournament(fitness)
            if j == i and len(fitness) > 1:
                j = self._tournament(fitness)
            if self.rng.random() < self.settings.crossover_rate:
                child = self._crossover(population[i], population[j])
            else:
                child = population[i].copy()
            child = repair(self.space, child, self.rng)
            if self.rng.random() < self.settings.mutation_rate:
                child = self._mutate(child)
            key = self.space.row_keys(child.reshape(1, -1))[0]
            for _ in range(MAX_EXTRA_MUTATIONS):
                if key not in seen:
                    break
                child = self._mutate(child)
                key = self.space.row_keys(child.reshape(1, -1))[0]
            if key not in seen:
                seen.add(key)
                children.append(child)
        return top_up(self.space, history, children, seen, n, self.rng)
