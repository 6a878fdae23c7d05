"""What a stored run amounts to: items scored and failed, and the failures by reason (for the end of ``score``, for
``metrics`` beside each run's numbers, and for the report)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bench.store.run import Run

SHOWN_REASONS = 3
REASON_WIDTH = 160


@dataclass
class RunSummary:
    """``items`` asked, ``scored`` (with at least one score row and no failure), ``failed`` (items with a failure),
    and ``reasons``: failed items per distinct reason, most frequent first."""

    items: int
    scored: int
    failed: int
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def failure_rate(self) -> float:
        """Failed items over items asked (0 for a run of no items)."""
        return self.failed / self.items if self.items else 0.0

    def line(self) -> str:
        """One line: ``240 items: 228 scored, 12 failed (8 x no such file; 4 x ...)`` (and how many are not scored
        yet, for an unfinished run)."""
        text = f"{self.items} items: {self.scored} scored, {self.failed} failed"
        if self.items > self.scored + self.failed:
            text += f", {self.items - self.scored - self.failed} not scored"
        if not self.reasons:
            return text
        shown = [f"{n} x {short(reason)}" for reason, n in list(self.reasons.items())[:SHOWN_REASONS]]
        more = len(self.reasons) - SHOWN_REASONS
        return f"{text} ({'; '.join(shown)}{f'; {more} more distinct reasons' if more > 0 else ''})"

    def reason_lines(self) -> list[str]:
        """Every distinct reason with its count, one per line."""
        return [f"{n:6d} x {short(reason)}" for reason, n in self.reasons.items()]


def short(reason: str) -> str:
    """A reason on one line, at most :data:`REASON_WIDTH` characters."""
    flat = " ".join(str(reason).split())
    return flat if len(flat) <= REASON_WIDTH else flat[:REASON_WIDTH - 3] + "..."


def summarize(run: Run) -> RunSummary:
    """The :class:`RunSummary` of a stored run (its failure table, the items it stored, its manifest's item count)."""
    failures = run.failures
    per_item = failures.drop_duplicates(["item_id", "reason"]) if len(failures) else failures
    reasons = Counter(per_item["reason"]) if len(per_item) else Counter()
    failed = set(failures["item_id"]) if len(failures) else set()
    stored = set(run.scored["item_id"]) if run.scored is not None and len(run.scored) else set()
    with_scores = set(run.pair["item_id"]) | set(run.choice["item_id"])
    items = int(run.manifest.n_items or len(stored | with_scores | failed))
    return RunSummary(items, len(with_scores - failed), len(failed), dict(reasons.most_common()))
