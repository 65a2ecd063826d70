"""The progress bar of a sweep: runs done out of runs to do, failures, ETA."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from satqm.sweep.executors import Task


class ProgressBar:
    """A progress bar over runs (with ETA) on stderr; failures printed above it."""

    def __init__(self, total: int, todo: int, progress: bool | Console) -> None:
        self.total, self.todo = total, todo
        self.done = self.failed = 0
        self._console = None if progress is True or not progress else progress
        self._enabled = bool(progress)
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if not self._enabled:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self._console or Console(stderr=True)
        self._console = console
        already = self.total - self.todo
        if already:
            console.print(
                f"sweep: {self.total} runs, {already} already done, {self.todo} to run",
                highlight=False,
            )
        if not self.todo:
            return self
        self._bar = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._bar.__enter__()
        self._task = self._bar.add_task("sweep", total=self.todo, failed="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def report(self, task: Task, outcome: Mapping[str, Any]) -> None:
        if outcome.get("status") == "failed":
            self.failed += 1
            if self._bar is not None:
                self._bar.console.print(
                    f"run #{task.index} ({task.run_id}) failed: {outcome.get('error', '')}",
                    markup=False,
                    highlight=False,
                )
        else:
            self.done += 1
        if self._bar is not None:
            self._bar.update(
                self._task,
                advance=1,
                failed=f"[red]{self.failed} failed[/red]" if self.failed else "",
            )
