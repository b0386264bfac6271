"""`rolebench report`: one self-contained HTML page about one run.

Per-role bar charts (matplotlib, drawn off-screen and embedded as base64 SVG images), the
worst-scoring samples of each task (from DIR/samples/<task>.jsonl), the metrics, and the run's
config. Nothing on the page is loaded from elsewhere.
"""

from __future__ import annotations

import base64
import io
import json
import warnings
from pathlib import Path
from typing import Any

from rolebench.data.splits import SPLITS
from rolebench.errors import MissingDependency
from rolebench.leaderboard.tables import metric_text
from rolebench.results.io import read_results, read_samples, samples_path
from rolebench.results.schema import RunResults
from rolebench.scoring.metrics import AVG, CUS, LABELS, METRIC_KEYS, RAW, SPE, metrics_for
from rolebench.storage.files import write_text_atomic
from rolebench.templating import html_environment

TEMPLATE_DIR = Path(__file__).parent / "templates"
REPORT_TEMPLATE = "report.html.j2"
REPORT_FILE = "report.html"
DEFAULT_WORST = 10
_COLORS = {CUS.key: "#0969da", RAW.key: "#8250df", SPE.key: "#1a7f37"}


def task_metrics(split: str) -> tuple[str, ...]:
    split_def = SPLITS.get(split)
    return tuple(m.key for m in metrics_for(split_def.kind)) if split_def is not None else METRIC_KEYS


def role_chart(title: str, per_role: dict[str, dict[str, Any]], metrics: tuple[str, ...]) -> str | None:
    """Horizontal grouped bars of each role's metrics as an SVG data URI; None when nothing to plot."""
    try:
        from matplotlib import rc_context
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingDependency("the run report's charts", "matplotlib", "report") from exc
    shown = [m for m in metrics if any(v.get(m) is not None for v in per_role.values())]
    if not shown:
        return None
    roles = sorted(per_role, key=lambda r: (-(per_role[r].get(shown[0]) or 0.0), r))
    height = 1.2 + 0.22 * len(roles) * max(1, len(shown)) ** 0.5
    # text.parse_math off: a role name is text, never mathtext (a role `$\\frac{1}{$` must not crash the page)
    style: dict[Any, Any] = {
        "svg.fonttype": "none",
        "svg.hashsalt": "rolebench",
        "font.size": 9,
        "text.parse_math": False,
    }
    with rc_context(style):
        figure = Figure(figsize=(7.5, height), layout="constrained")
        axes = figure.add_subplot()
        bar = 0.8 / len(shown)
        for offset, metric in enumerate(shown):
            values = [per_role[r].get(metric) or 0.0 for r in roles]
            axes.barh(
                [i + offset * bar for i in range(len(roles))],
                values,
                height=bar,
                color=_COLORS.get(metric),
                label=LABELS.get(metric, metric),
            )
        axes.set_yticks([i + bar * (len(shown) - 1) / 2 for i in range(len(roles))], labels=roles)
        axes.set_ylim(len(roles) - 0.5 + bar * (len(shown) - 1), -0.5)  # best role on top, no empty margin
        axes.set_xlim(0, 1)
        axes.set_xlabel("ROUGE-L")
        axes.set_title(title, loc="left")
        axes.grid(axis="x", alpha=0.3)
        axes.set_axisbelow(True)
        axes.legend(loc="lower right")
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing CJK glyphs: SVG text is drawn by the browser's fonts
            figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def worst_samples(run_dir: Path, task: str, metric: str, count: int) -> dict[str, Any]:
    """The `count` lowest-scoring samples of a task on `metric`, and how many had no score."""
    if not samples_path(run_dir, task).is_file():
        return {"available": False, "rows": [], "unscored": 0}
    records = read_samples(run_dir, task)
    scored = [r for r in records if r.scores.get(metric) is not None]
    scored.sort(key=lambda r: (r.scores[metric] or 0.0, r.index))
    rows = [
        {
            "id": r.id,
            "role": r.role,
            "question": r.question,
            "output": r.output or "",
            "references": list(r.references),
            "scores": {k: metric_text(v) for k, v in r.scores.items()},
        }
        for r in scored[:count]
    ]
    return {"available": True, "rows": rows, "unscored": len(records) - len(scored)}


def summary_rows(results: RunResults) -> list[dict[str, Any]]:
    rows = []
    for name, entry in [*results.results.items(), *results.groups.items()]:
        data = entry.model_dump()
        win = data.get("win_rate")
        rows.append(
            {
                "name": name,
                "group": name in results.groups,
                "n": data.get("n"),
                "not_covered": data.get("n_not_covered"),
                "metrics": [metric_text(data.get(m)) for m in (*METRIC_KEYS, AVG)],
                "win_rate": "–" if win is None else f"{100 * win:.2f}",
            }
        )
    return rows


def report_context(run_dir: Path, worst: int = DEFAULT_WORST) -> dict[str, Any]:
    results = read_results(run_dir)
    model = results.config.model
    tasks = []
    for name, task in results.results.items():
        metrics = task_metrics(task.split)
        tasks.append(
            {
                "name": name,
                "split": task.split,
                "primary": LABELS.get(metrics[0], metrics[0]),
                "chart": role_chart(f"{name}: ROUGE-L per role", task.per_role, metrics),
                "worst": worst_samples(run_dir, name, metrics[0], worst),
                "metrics": metrics,
            }
        )
    return {
        "title": f"RoleBench run report: {model.get('name') or model.get('spec') or run_dir.name}",
        "model": model,
        "created": results.created,
        "limit": results.config.limit,
        "protocol": results.config.scoring.get("protocol"),
        "summary": summary_rows(results),
        "tasks": tasks,
        "config": json.dumps(
            results.config.model_dump(mode="json"), ensure_ascii=False, indent=2, sort_keys=True
        ),
    }


def render_report(run_dir: Path, worst: int = DEFAULT_WORST) -> str:
    return (
        html_environment(TEMPLATE_DIR)
        .get_template(REPORT_TEMPLATE)
        .render(**report_context(Path(run_dir), worst))
    )


def write_report(run_dir: Path, out: Path | None = None, worst: int = DEFAULT_WORST) -> Path:
    """Write the report (default DIR/report.html) atomically and return its path."""
    target = Path(out) if out is not None else Path(run_dir) / REPORT_FILE
    write_text_atomic(target, render_report(Path(run_dir), worst))
    return target
