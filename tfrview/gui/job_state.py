"""The state of a background job as data, never as status text parsed back: the window decides on
`phase`, and words for the status bar come from `text`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum


class Phase(Enum):
    IDLE = "idle"  # never started
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"  # cancelled before it finished


@dataclass(frozen=True, slots=True)
class JobState:
    phase: Phase = Phase.IDLE
    step: str = ""  # what it is doing now, e.g. "analysis"
    done: int = 0
    total: int = 0
    error: str = ""

    @property
    def running(self) -> bool:
        return self.phase is Phase.RUNNING

    def started(self) -> JobState:
        return JobState(Phase.RUNNING)

    def progressed(self, step: str, done: int, total: int) -> JobState:
        return replace(self, phase=Phase.RUNNING, step=step, done=done, total=total)

    def failed(self, error: str) -> JobState:
        return replace(self, phase=Phase.FAILED, error=error)

    def finished(self) -> JobState:
        """The job's process ended: done if it said so, else stopped."""
        return replace(self, phase=Phase.STOPPED) if self.running else self

    def text(self, what: str) -> str:
        if self.phase is Phase.RUNNING:
            if not self.step:
                return f"{what}: starting"
            pct = 100 * self.done // max(self.total, 1)
            if self.step == "records":  # counted in records (the analysis): how many, not only a share
                return f"{what}: {pct}% of {self.total:,} records"
            return f"{what}: {self.step} {pct}%"
        return {
            Phase.IDLE: "",
            Phase.DONE: f"{what} done",
            Phase.FAILED: f"{what} failed: {self.error}",
            Phase.STOPPED: f"{what} stopped",
        }[self.phase]
