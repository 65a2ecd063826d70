"""What a sweep folder says: its manifest, one run's results, mean and
confidence interval of each metric over seeds, tables and plots."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from satqm.sweep import store
from satqm.sweep.keys import plain

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from satqm.results import Results

#: The manifest column of every run's seed; not an axis to average over.
SEED = "seed"


def _t975(dof: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


#: Most rows a notebook shows of a sweep's table.
_HTML_ROWS = 40


class SweepResult:
    """The runs of a sweep folder and what they say.

    Attributes
    ----------
    out : pathlib.Path
        The sweep folder.
    manifest : pandas.DataFrame
        One row per planned run: ``index``, ``run_id``, ``status`` (``done``,
        ``failed``, ``missing``), one column per axis (named by its key),
        ``seed``, ``error``, then every summary metric (NaN unless done).
    axes : list of str
        The axis keys (not the seed).
    metrics : list of str
        The summary metrics in the manifest.
    """

    def __init__(self, out: Path, plan: Mapping[str, Any], manifest: pd.DataFrame) -> None:
        self.out = Path(out)
        self.plan = dict(plan)
        self.manifest = manifest
        self.axes: list[str] = list(plan["axes"])
        fixed_cols = {"index", "run_id", "status", SEED, "error", *self.axes}
        self.metrics: list[str] = [c for c in manifest.columns if c not in fixed_cols]

    @classmethod
    def load(cls, out: str | os.PathLike[str]) -> SweepResult:
        """Read a sweep folder (rebuilding its manifest from the run folders)."""
        outp = Path(out)
        plan = store.read_plan(outp)
        return cls(outp, plan, store.build_manifest(outp, plan))

    # ----- status ---------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """``{"done": n, "failed": n, "missing": n}``."""
        s = self.manifest["status"]
        return {k: int((s == k).sum()) for k in ("done", "failed", "missing")}

    @property
    def ok(self) -> bool:
        """Every planned run is done."""
        return bool((self.manifest["status"] == "done").all())

    @property
    def failures(self) -> pd.DataFrame:
        """The failed runs' rows (with ``error``)."""
        return self.manifest[self.manifest["status"] == "failed"]

    def __len__(self) -> int:
        return len(self.manifest)

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"<SweepResult {str(self.out)!r}: {len(self)} runs, {c['done']} done, "
            f"{c['failed']} failed, {c['missing']} missing>"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the counts and the manifest's table."""
        import html

        cols = ["index", "status", *self.axes, SEED, *self.metrics]
        table = self.manifest[[c for c in cols if c in self.manifest]].to_html(
            index=False, max_rows=_HTML_ROWS, float_format=lambda v: f"{v:.6g}"
        )
        return f"<div><p><code>{html.escape(repr(self))}</code></p>{table}</div>"

    # ----- one run --------------------------------------------------------------

    def _row(self, run: int | str) -> Any:
        m = self.manifest
        if isinstance(run, str):
            hits = m[m["run_id"].astype(str).str.startswith(run)] if run else m.iloc[:0]
            if len(hits) != 1:
                how = "no" if hits.empty else "more than one"
                raise KeyError(f"{run!r}: {how} run with this id")
            return hits.iloc[0]
        if isinstance(run, bool) or not isinstance(run, int):
            raise TypeError(f"a run index (int) or run id (str), not {type(run).__name__}")
        hits = m[m["index"] == run]
        if hits.empty:
            raise KeyError(f"no run #{run} (there are {len(m)})")
        return hits.iloc[0]

    def run_dir(self, run: int | str) -> Path:
        """The folder of one run (by index or run id)."""
        return store.run_dir(self.out, str(self._row(run)["run_id"]))

    def results(self, run: int | str) -> Results:
        """The :class:`satqm.Results` of one finished run (by index or run id)."""
        from satqm.results import Results

        row = self._row(run)
        if row["status"] != "done":
            raise KeyError(f"run #{row['index']} ({row['run_id']}) is {row['status']}")
        return Results.load(store.run_dir(self.out, str(row["run_id"])))

    # ----- aggregation ----------------------------------------------------------

    def _by(self, by: str | Sequence[str] | None) -> list[str]:
        if by is None:
            return [a for a in self.axes if a != "simulation.seed"]
        cols = [by] if isinstance(by, str) else list(by)
        for c in cols:
            if c not in self.axes and c != SEED:
                raise KeyError(f"{c!r} is not an axis of this sweep (axes: {', '.join(self.axes)})")
        return cols

    def _metrics(self, metrics: str | Sequence[str] | None) -> list[str]:
        if metrics is None:
            return list(self.metrics)
        ms = [metrics] if isinstance(metrics, str) else list(metrics)
        for m in ms:
            if m not in self.metrics:
                known = ", ".join(self.metrics)
                raise KeyError(f"{m!r} is not a summary metric (metrics: {known})")
        return ms

    def aggregate(
        self, by: str | Sequence[str] | None = None, metrics: str | Sequence[str] | None = None
    ) -> pd.DataFrame:
        """Mean, standard deviation, count and 95 % confidence half-width of
        each summary metric over the finished runs of each group.

        ``by`` defaults to every axis (so the groups are the seeds of one
        combination); ``[]`` pools every run. The result is indexed by the
        ``by`` columns, in sweep order; its columns are ``(metric, stat)``
        with stat ``mean``, ``std``, ``n``, ``ci95``. ``ci95`` is
        ``t(0.975, n-1) * std / sqrt(n)`` (Student's t; NaN for n < 2).
        """
        import numpy as np
        import pandas as pd

        cols = self._by(by)
        ms = self._metrics(metrics)
        df = self.manifest[self.manifest["status"] == "done"]
        if not cols:
            df = df.assign(_all="all")
            keys = ["_all"]
        else:
            keys = cols
        g = df.groupby(keys, sort=False, dropna=False)
        mean, std, n = g[ms].mean(), g[ms].std(ddof=1), g[ms].count()
        parts = {}
        for m in ms:
            nn = n[m].to_numpy()
            sd = std[m].to_numpy()
            with np.errstate(invalid="ignore", divide="ignore"):
                tq = np.array([_t975(int(k) - 1) if k >= 2 else np.nan for k in nn])
                ci = tq * sd / np.sqrt(nn)
            parts[(m, "mean")] = mean[m].to_numpy()
            parts[(m, "std")] = sd
            parts[(m, "n")] = nn.astype(np.int64)
            parts[(m, "ci95")] = ci
        out = pd.DataFrame(parts, index=mean.index)
        out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "stat"])
        if not cols:
            out.index = pd.Index(["all"], name=None) if len(out) else pd.Index([], name=None)
        return out

    def table(
        self,
        metric: str | Sequence[str],
        by: str | Sequence[str] | None = None,
        fmt: str = "markdown",
        digits: int = 4,
    ) -> str:
        """Mean ± 95 % CI per group of one metric, or of each of a list of
        metrics, as Markdown or CSV.

        Columns: the ``by`` axes, ``n``, ``mean``, ``ci95``, ``std``. For a
        list of metrics, Markdown gives one such table per metric, in order,
        separated by a blank line; CSV gives one table with a ``metric``
        column after the axes. Markdown rounds to ``digits`` significant
        digits; CSV keeps full precision.
        """
        if fmt not in ("markdown", "csv"):
            raise ValueError(f"fmt must be 'markdown' or 'csv', not {fmt!r}")
        if isinstance(metric, str):
            flat, cols = self._flat(metric, by)
            if fmt == "csv":
                return flat.to_csv(index=False, lineterminator="\n")
            return self._markdown(flat, cols, metric, digits)
        ms = list(dict.fromkeys(self._metrics(metric)))
        if not ms:
            raise ValueError("no metric given")
        if fmt == "markdown":
            return "\n".join(self._markdown(*self._flat(m, by), m, digits) for m in ms)
        import pandas as pd

        parts = []
        for m in ms:
            flat, cols = self._flat(m, by)
            parts.append(flat.assign(metric=m))
        long = pd.concat(parts, ignore_index=True)[[*cols, "metric", "n", "mean", "ci95", "std"]]
        return long.to_csv(index=False, lineterminator="\n")

    def _flat(self, metric: str, by: str | Sequence[str] | None) -> tuple[pd.DataFrame, list[str]]:
        """One metric's aggregate as a flat table: the group columns, then
        ``n``, ``mean``, ``ci95``, ``std``; and the names of the group columns."""
        agg = self.aggregate(by, [metric])
        cols = self._by(by)
        flat = agg[metric].reset_index()
        if not cols:
            flat = flat.rename(columns={"index": "group"})
            cols = ["group"]
        return flat[[*cols, "n", "mean", "ci95", "std"]], cols

    @staticmethod
    def _markdown(flat: pd.DataFrame, cols: list[str], metric: str, digits: int) -> str:
        def cell(v: Any) -> str:
            if isinstance(v, float):
                return "" if math.isnan(v) else f"{v:.{digits}g}"
            s = store.display(v) if not isinstance(v, str) else v
            return s.replace("|", "\\|")

        header = [*cols, "n", f"{metric} (mean)", "± 95 % CI", "std"]
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] * len(cols) + ["---:"] * 4) + "|",
        ]
        for row in flat.itertuples(index=False):
            vals = list(row)
            lines.append(
                "| "
                + " | ".join(
                    [cell(plain(v)) for v in vals[: len(cols)]]
                    + [str(int(vals[len(cols)]))]
                    + [cell(float(v)) for v in vals[len(cols) + 1 :]]
                )
                + " |"
            )
        return "\n".join(lines) + "\n"

    def plot(
        self,
        metric: str,
        x: str,
        hue: str | None = None,
        where: Mapping[str, Any] | None = None,
        ax: Axes | None = None,
    ) -> Figure:
        """``metric`` (mean over seeds) against axis ``x``, one line per value
        of axis ``hue``, with 95 % confidence error bars.

        Every other axis must have one value among the runs shown: select
        with ``where={axis: value or [values]}``. Returns the Figure (no
        pyplot state; pass ``ax`` to draw into your own axes).
        """
        import numpy as np
        import pandas as pd

        self._metrics(metric)
        for a in (x, hue) if hue is not None else (x,):
            self._by(a)
        m = self.manifest[self.manifest["status"] == "done"]
        for k, v in (where or {}).items():
            self._by(k)
            vals = list(v) if isinstance(v, (list, tuple, set)) else [v]
            m = m[m[k].isin(vals)]
        others = [a for a in self.axes if a not in (x, hue) and m[a].nunique(dropna=False) > 1]
        if others:
            raise ValueError(
                f"{', '.join(others)} also vary among these runs: choose values with "
                f"where={{...}} or use one as hue"
            )
        if m.empty:
            raise ValueError("no finished runs to plot")
        sub = SweepResult(self.out, self.plan, m)
        agg = sub.aggregate([x] + ([hue] if hue else []), [metric])[metric].reset_index()

        if ax is None:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            fig = Figure(figsize=(7, 4.5), constrained_layout=True)
            FigureCanvasAgg(fig)
            ax = fig.subplots()
        else:
            fig = ax.figure  # type: ignore[assignment]
        numeric = pd.api.types.is_numeric_dtype(agg[x]) and not pd.api.types.is_bool_dtype(agg[x])
        if not numeric:
            labels = list(dict.fromkeys(agg[x].tolist()))
            pos = {v: i for i, v in enumerate(labels)}
        groups = [(None, agg)] if hue is None else list(agg.groupby(hue, sort=False, dropna=False))
        for hv, g in groups:
            g = g.sort_values(x) if numeric else g
            xs = g[x].to_numpy() if numeric else np.array([pos[v] for v in g[x]])
            err = np.nan_to_num(g["ci95"].to_numpy(dtype=float), nan=0.0)
            label = None if hue is None else f"{hue} = {store.display(plain(hv))}"
            ax.errorbar(xs, g["mean"].to_numpy(dtype=float), yerr=err, marker="o", capsize=3,
                        label=label)  # fmt: skip
        if not numeric:
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels([store.display(plain(v)) for v in labels])
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        n = agg["n"]
        ns = f"{int(n.min())}" if n.min() == n.max() else f"{int(n.min())}–{int(n.max())}"
        ax.set_title(f"mean and 95 % CI over {ns} run{'s' if n.max() != 1 else ''} per point")
        if hue is not None:
            ax.legend()
        ax.grid(True, alpha=0.3)
        return fig


def load(out: str | os.PathLike[str]) -> SweepResult:
    """The results of the sweep in folder ``out`` (its manifest rebuilt from
    the run folders; nothing is written)."""
    return SweepResult.load(out)
