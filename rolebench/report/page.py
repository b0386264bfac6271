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
from rolebench.leaderboard.rows import display_name
from rolebench.leaderboard.tables import metric_text
from rolebench.report.sessions import session_tasks
from rolebench.report.summary import MEASURES, context_texts, entries
from rolebench.results.schema import RunResults
from rolebench.run.elicitation import elicitation_label
from rolebench.run.folder import RunFolder
from rolebench.scoring.flags import MEANINGS, describe
from rolebench.scoring.flags import ORDER as FLAG_ORDER
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS, METRICS, metrics_for
from rolebench.storage.files import write_text_atomic
from rolebench.templating import html_environment

TEMPLATE_DIR = Path(__file__).parent / "templates"
REPORT_TEMPLATE = "report.html.j2"
DEFAULT_WORST = 10
_COLORS = {m.key: m.color for m in METRICS}


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
    if not RunFolder(run_dir).samples_path(task).is_file():
        return {"available": False, "rows": [], "unscored": 0}
    records = RunFolder(run_dir).read_samples(task)
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


def _percent(value: float | None, interval: list[float] | None = None) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.2f}" + (f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else "")


def held_protocols(results: RunResults) -> list[str]:
    """The headline protocol first, then every other the run holds."""
    headline = results.config.scoring.get("protocol")
    held = list(results.config.scoring.get("protocols") or {})
    return list(dict.fromkeys(p for p in [headline, *held] if p))


def summary_rows(results: RunResults) -> list[dict[str, Any]]:
    """One row per task or group and protocol (the headline first), with the judge's fields and flags."""
    protocols = held_protocols(results)
    headline = protocols[0] if protocols else None
    rows = []
    for name, entry in entries(results):
        data = entry.model_dump()
        for index, protocol in enumerate(protocols or [None]):
            block = data if protocol == headline else (data.get(protocol or "") or {})
            first = index == 0
            rows.append(
                {
                    "name": name if first else "",
                    "group": name in results.groups,
                    "protocol": f"{protocol} ({MEASURES.get(protocol or '', '')})" if protocol else "",
                    "first": first,
                    "n": data.get("n") if first else "",
                    "not_covered": data.get("n_not_covered") if first else None,
                    "metrics": [metric_text(block.get(m)) for m in (*METRIC_KEYS, AVG)],
                    "win_rate": _percent(data.get("win_rate"), data.get("win_rate_ci")) if first else "",
                    "win_rate_lc": _percent(data.get("win_rate_lc"), data.get("win_rate_lc_ci"))
                    if first
                    else "",
                    "flags": [(f, MEANINGS.get(f, "")) for f in data.get("flags") or []] if first else [],
                }
            )
    return rows


def answer_rows(results: RunResults) -> list[dict[str, Any]]:
    """Per task: answer length against the references', the shares cut at the token limit and looping."""
    rows = []
    for name, task in results.results.items():
        lengths = task.lengths
        if lengths is None or lengths.answer_words_mean is None:
            continue
        reference = lengths.reference_words_mean
        rows.append(
            {
                "name": name,
                "answer": f"{lengths.answer_words_mean:.0f}",
                "reference": "–" if reference is None else f"{reference:.0f}",
                "ratio": f"{lengths.answer_words_mean / reference:.2f}x" if reference else "–",
                "tokens": "–" if lengths.answer_tokens_mean is None else f"{lengths.answer_tokens_mean:.0f}",
                "cut": "–" if lengths.cut_at_limit is None else f"{lengths.cut_at_limit:.0%}",
                "looping": "–" if lengths.looping is None else f"{lengths.looping:.0%}",
                "max_new_tokens": lengths.max_new_tokens,
                **context_texts(task.context.model_dump() if task.context else None, "–"),
            }
        )
    return rows


def versus_rows(results: RunResults) -> list[dict[str, Any]]:
    """Head-to-head results (`rolebench judge --against`): one row per task or group and opponent."""
    rows = []
    for name, entry in entries(results):
        for key, fields in (entry.value("versus") or {}).items():
            rows.append(
                {
                    "name": name,
                    "group": name in results.groups,
                    "against": key,
                    "judge": ((results.config.versus or {}).get(key) or {}).get("spec", ""),
                    "win_rate": _percent(fields.get("win_rate"), fields.get("win_rate_ci")),
                    "win_rate_lc": _percent(fields.get("win_rate_lc"), fields.get("win_rate_lc_ci")),
                    "wtl": "/".join(str(fields.get(k) or 0) for k in ("wins", "ties", "losses")),
                    "judged": f"{fields.get('judged') or 0} of {fields.get('n_shared') or 0}",
                }
            )
    return rows


def agreement_rows(results: RunResults) -> list[dict[str, Any]]:
    """Two judges' agreement on the same pairs (`rolebench.judging.agreement`): a row per task or group."""
    rows = []
    for name, entry in entries(results):
        for judges, fields in (entry.value("judge_agreement") or {}).items():
            kappa = fields.get("kappa")
            consistency = fields.get("position_consistency") or {}
            rows.append(
                {
                    "name": name,
                    "group": name in results.groups,
                    "judges": judges,
                    "n": fields.get("n") or 0,
                    "agreement": _percent(fields.get("agreement"), None),
                    "kappa": "–" if kappa is None else f"{kappa:.2f}",
                    "consistency": ", ".join(
                        f"{judge} {'–' if value is None else f'{value:.2f}'}"
                        for judge, value in consistency.items()
                    ),
                }
            )
    return rows


def floor_rows(results: RunResults) -> list[dict[str, Any]]:
    """Per task and group and floor: its scores under each protocol, beside the run's own."""
    protocols = held_protocols(results)
    rows = []
    for name, entry in entries(results):
        floors = entry.value("floors") or {}
        data = entry.model_dump()
        for spec, block in {"this run": None, **floors}.items():
            values = []
            for protocol in protocols:
                own = data if protocol == protocols[0] else (data.get(protocol) or {})
                source = own if block is None else (block.get(protocol) or {})
                values.append([metric_text(source.get(m)) for m in (*METRIC_KEYS, AVG)])
            rows.append({"name": name, "spec": spec, "own": block is None, "cells": values})
        if not floors:
            rows = [r for r in rows if r["name"] != name]
    return rows


def report_context(run_dir: Path, worst: int = DEFAULT_WORST) -> dict[str, Any]:
    results = RunFolder(run_dir).read_results()
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
        # the model as the user gave it (its spec), not a name from the model's own files (leaderboard's rule)
        "title": f"RoleBench run report: {display_name(str(model.get('spec') or ''), run_dir.name, {})}",
        "model": model,
        "created": results.created,
        "limit": results.config.limit,
        "protocol": results.config.scoring.get("protocol"),
        "elicitation": elicitation_label(results.config.elicitation),
        "summary": summary_rows(results),
        "answers": answer_rows(results),
        "floors": floor_rows(results),
        "protocols": held_protocols(results),
        "metric_labels": [LABELS[m] for m in (*METRIC_KEYS, AVG)],
        "flag_legend": [describe(f) for f in FLAG_ORDER],
        "versus": versus_rows(results),
        "agreement": agreement_rows(results),
        "tasks": tasks,
        "sessions": session_tasks(run_dir, results),
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
    target = Path(out) if out is not None else RunFolder(run_dir).report_path
    write_text_atomic(target, render_report(Path(run_dir), worst))
    return target
