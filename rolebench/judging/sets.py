"""Which folder a judge's verdicts go to, and how a new pass joins what is there.

A judge is identified by everything that changes its verdicts: its model identity (spec, options,
weights), the endpoint it answers at (two servers behind one model name are two judges: a server that
answered nonsense never stands in for another), and its judge file (templates, parser, orders,
decoding, retries). An opponent run is identified by its run definition and the digests of the samples
it was judged on. Each (opponent, judge) gets its own folder (`rolebench.run.judgments.JudgmentSet`), so
two opponents or two judges never mix.

A new pass never makes a result worse: a pair that was judged keeps its verdict when the new pass did
not judge it (a failed request, an unparsable verdict, a smaller `--judge-limit`), as long as both
answers are the ones it judged.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from model_adapters import ModelSpec, model_identity
from rolebench.errors import DataError
from rolebench.judging.config import JudgeConfig
from rolebench.judging.outcomes import failure_line
from rolebench.judging.settings import JudgeSettings
from rolebench.results.io import read_results_file
from rolebench.run.folder import RunFolder
from rolebench.run.judgments import JudgmentSet
from rolebench.run.layout import slug
from rolebench.storage.records import content_key


def endpoint(spec: str, settings: JudgeSettings) -> str | None:
    """Where the judge answers: the base URL given, or the one in its spec (None: the backend's own)."""
    url = settings.base_url or ModelSpec.parse(spec, where="--judge").base_url
    return url.rstrip("/") if url else None


def judge_model_identity(spec: str, settings: JudgeSettings) -> dict[str, Any]:
    """The judge's model identity, its endpoint aside (a judge holds it apart: `judge_identity`, and the
    judgment keys of `rolebench.judging.store`), so a judge's verdicts keep the keys they always had."""
    found = model_identity(ModelSpec.parse(spec, where="--judge"), settings.adapter_options())
    return {k: v for k, v in found.items() if k != "endpoint"}


def judge_identity(spec: str, settings: JudgeSettings, config: JudgeConfig) -> dict[str, Any]:
    """Everything that changes a judge's verdicts (see the module docstring)."""
    described = config.describe()
    return {
        "model": judge_model_identity(spec, settings),
        "endpoint": endpoint(spec, settings),
        "judge": {k: described[k] for k in ("template_hash", "labels", "parser", "generation", "retries")}
        | {"both_orders": config.both_orders},
    }


def judge_set(folder: RunFolder, spec: str, key: str, opponent: str | None = None) -> JudgmentSet:
    """The folder of judge `spec` (identity digest `key`), against the baseline or an opponent's folder."""
    return folder.judgment_set(f"{slug(spec)}-{key[:8]}", opponent)


def opponent_folder(name: str, key: str) -> str:
    return f"{slug(name)}-{key[:8]}"


def set_of(folder: RunFolder, meta: dict[str, Any]) -> JudgmentSet:
    """The set of judgments a judge.json block (as results.json's config shows it) was written with."""
    against = meta.get("against")
    opponent = (
        opponent_folder(str(against.get("name")), str(against.get("identity")))
        if isinstance(against, dict) and against.get("identity")
        else None
    )
    return judge_set(folder, str(meta.get("spec")), str(meta.get("key") or ""), opponent)


def _same_answers(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return all(old.get(k) == new.get(k) for k in ("output_sha", "opponent_sha") if k in old and k in new)


def joined(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A task's lines after a new pass: the new ones, but a verdict the new pass did not give again is
    kept (same answers), and items the new pass did not cover keep their lines."""
    judged = {line.get("id"): line for line in old if line.get("status") == "judged"}
    covered = {line.get("id") for line in new}
    lines = []
    for line in new:
        kept = judged.get(line.get("id"))
        keep = kept is not None and line.get("status") != "judged" and _same_answers(kept, line)
        lines.append(kept if keep and kept is not None else line)
    return lines + [line for line in old if line.get("id") not in covered]


def pass_outcome(
    new: dict[str, list[dict[str, Any]]], merged: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """What one pass itself gave, apart from what it kept (judge.json's `pass`): `verdicts` it gave,
    pairs it asked about and got `no_verdict` for, verdicts of earlier passes `kept` in their place, and
    the line saying why (`failed`; None when it gave every verdict it asked for). A pass that gave none
    while the numbers show earlier verdicts must say so, never pass those numbers off as its own."""
    asked = ("judged", "parse_failure", "judge_error")
    gave = {(t, line.get("id")): line.get("status") for t, lines in new.items() for line in lines}
    verdicts = sum(1 for status in gave.values() if status == "judged")
    no_verdict = sum(1 for status in gave.values() if status in asked and status != "judged")
    kept = sum(
        1
        for task, lines in merged.items()
        for line in lines
        if line.get("status") == "judged" and gave.get((task, line.get("id")), "judged") != "judged"
    )
    return {"verdicts": verdicts, "no_verdict": no_verdict, "kept": kept, "failed": failure_line(new)}


def _earlier(judgments: JudgmentSet, task: str) -> list[dict[str, Any]]:
    """A task's lines before a pass; none from a file that does not read back (it is written anew)."""
    try:
        return judgments.lines(task)
    except DataError as exc:
        print(f"rolebench: judgments replaced by this pass's: {exc.what} ({exc.where})", file=sys.stderr)
        return []


def write_pass(
    judgments: JudgmentSet, lines: dict[str, list[dict[str, Any]]], meta: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """Join a pass's lines to the set's (see `joined`) and write them with the pass's meta, what the pass
    itself gave in it (`pass_outcome`); the lines."""
    merged = {task: joined(_earlier(judgments, task), task_lines) for task, task_lines in lines.items()}
    meta["pass"] = pass_outcome(lines, merged)
    judgments.write(merged, meta)
    return merged


def adopt_legacy(folder: RunFolder) -> None:
    """Move judgments an older rolebench wrote (DIR/judgments/<task>.jsonl and
    judgments/versus/<name>/<task>.jsonl; how they were made in results.json's config) into judge
    folders, keeping every line (call under the folder's lock)."""
    legacy = [s for s in folder.judgment_sets() if s.legacy]
    if not legacy:
        return
    config: Any = None
    if folder.results_path.is_file():
        try:
            config = read_results_file(folder.results_path).config
        except DataError:
            config = None
    for judgments in legacy:
        if judgments.opponent is None:
            meta = dict((config.judge if config is not None else None) or {})
        else:
            blocks = (config.versus if config is not None else None) or {}
            name, meta = next(
                ((k, dict(v)) for k, v in blocks.items() if slug(k) == judgments.opponent), (None, {})
            )
            meta["against"] = {**(meta.get("against") or {}), "name": name or judgments.opponent}
        meta.setdefault("spec", "unknown judge (judged by an older rolebench)")
        key = content_key("legacy-judgments", str(judgments.folder), meta.get("judged_at"))
        meta["key"] = key
        judge_set(folder, str(meta["spec"]), key, judgments.opponent).take_files(judgments, meta)
