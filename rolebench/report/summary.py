"""The table printed at the end of a run: every task and group, under every protocol the run holds."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from rolebench.data.splits import SPLITS
from rolebench.report.coverage import cell, coverage_notes, unseen_notes
from rolebench.report.sessions_table import sessions_table
from rolebench.results.schema import GroupResult, RunResults, TaskResult
from rolebench.run.elicitation import elicitation_label
from rolebench.scoring.flags import describe, sorted_flags
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS, RAW
from rolebench.scoring.protocols import PROTOCOLS, get_protocol

SCORE_COLUMNS = (*METRIC_KEYS, AVG)
MEASURES = {name: get_protocol(name).measure_name for name in PROTOCOLS}  # "recall" or "F", by protocol


def _protocols(results: RunResults) -> list[str]:
    headline = results.config.scoring.get("protocol")
    held = list(results.config.scoring.get("protocols") or {})
    return list(dict.fromkeys([p for p in [headline, *held] if p]))


def _label(protocol: str, headline: str | None) -> str:
    measure = MEASURES.get(protocol)
    return f"{protocol}{' (' + measure + ')' if measure else ''}{' *' if protocol == headline else ''}"


def _rows(
    name: str, data: dict[str, Any], protocols: list[str], headline: str | None, group: bool
) -> list[list[Any]]:
    rows = []
    shown: list[str | None] = list(protocols) or [None]
    for index, protocol in enumerate(shown):
        block = data if protocol in (None, headline) else (data.get(protocol or "") or {})
        total = block.get(f"{protocol}_total") if protocol else None
        first = index == 0
        rows.append(
            [
                (f"[group] {name}" if group else name) if first else "",
                _label(protocol, headline) if protocol else "",
                data.get("n") if first else "",
                ("" if group else data.get("n_not_covered")) if first else "",
                *(cell(block.get(c)) for c in SCORE_COLUMNS),
                cell(total) if total is not None else "",
                cell(data.get("win_rate")) if first else "",
                cell(data.get("win_rate_lc")) if first else "",
                *(context_texts(data.get("context")).values() if first else ("", "", "")),
                ", ".join(data.get("flags") or []) if first else "",
            ]
        )
    return rows


def context_texts(context: dict[str, Any] | None, blank: str = "-") -> dict[str, str]:
    """Mean prompt tokens, latency (the mean seconds one answer took; answers generated together overlap,
    so not 1 / throughput) and throughput (answers per second of wall-clock time) as shown: `blank` where
    not measured. The summary's and the report's cells."""
    context = context or {}
    tokens, seconds = context.get("prompt_tokens_mean"), context.get("seconds_mean")
    rate = context.get("answers_per_s")
    return {
        "prompt_tokens": blank if tokens is None else f"{tokens:.0f}",
        "seconds": blank if seconds is None else f"{seconds:.2f}",
        "answers_per_s": blank if rate is None else f"{rate:.3g}",
    }


def summary_table(results: RunResults) -> str:
    """Tasks then groups; one row per protocol (the headline one, marked *, first)."""
    protocols = _protocols(results)
    headline = results.config.scoring.get("protocol")
    rows: list[list[Any]] = []
    for name, task in results.results.items():
        rows += _rows(name, task.model_dump(), protocols, headline, group=False)
    for name, group in results.groups.items():
        rows += _rows(name, group.model_dump(), protocols, headline, group=True)
    headers = [
        "task",
        "protocol",
        "n",
        "not covered",
        *(LABELS[c] for c in SCORE_COLUMNS),
        "split total",
        "win rate",
        "LC win rate",
        "prompt tok",
        "latency s",
        "answers/s",
        "flags",
    ]
    optional = {
        "split total",
        "win rate",
        "LC win rate",
        "prompt tok",
        "latency s",
        "answers/s",
    }  # shown when some row has one
    keep = [
        i for i, h in enumerate(headers) if h not in optional or any(row[i] not in ("", "-") for row in rows)
    ]
    return tabulate(
        [[row[i] for i in keep] for row in rows], headers=[headers[i] for i in keep], tablefmt="github"
    )


def elicitation_notes(results: RunResults) -> list[str]:
    """How the role was prompted, roles whose script had fewer pairs than shots, and head-to-head results."""
    block = results.config.elicitation or {}
    notes = [f"elicitation: {elicitation_label(block)}"]
    if block.get("retriever"):
        notes[0] += f" (demonstrations from each role's script, retriever {block['retriever'].get('name')})"
    for task, info in (block.get("tasks") or {}).items():
        short = info.get("fewer_pairs_than_shots") or {}
        if short:
            roles = ", ".join(f"{role} ({pairs})" for role, pairs in short.items())
            notes.append(f"{task}: fewer script pairs than shots, all of them used: {roles}")
    entries: list[tuple[str, TaskResult | GroupResult]] = [*results.results.items(), *results.groups.items()]
    for name, entry in entries:
        for key, fields in (entry.value("versus") or {}).items():
            notes.append(f"{name} versus {key}: {versus_text(fields)}")
        for judges, fields in (entry.value("judge_agreement") or {}).items():
            notes.append(f"{name}: judges {judges}: {agreement_text(fields)}")
    return notes


def agreement_text(fields: dict[str, Any]) -> str:
    """Two judges' agreement in one line: equal outcomes, kappa, each one's position consistency."""
    share, kappa = fields.get("agreement"), fields.get("kappa")
    text = "no pair judged by both" if share is None else f"{share:.0%} of {fields.get('n')} pairs agree"
    if kappa is not None:
        text += f" (kappa {kappa:.2f})"
    consistency = fields.get("position_consistency") or {}
    shown = [f"{judge} {value:.2f}" for judge, value in consistency.items() if value is not None]
    return text + (f"; position consistency {', '.join(shown)}" if shown else "")


def versus_text(fields: dict[str, Any]) -> str:
    """A head-to-head result in one line: win rate, its interval, W/T/L, how many judged of shared."""
    rate, ci = fields.get("win_rate"), fields.get("win_rate_ci")
    text = "win rate -" if rate is None else f"win rate {rate:.4f}"
    if ci:
        text += f" [{ci[0]:.4f}, {ci[1]:.4f}]"
    lc, lc_ci = fields.get("win_rate_lc"), fields.get("win_rate_lc_ci")
    if lc is not None:
        text += f", LC {lc:.4f}" + (f" [{lc_ci[0]:.4f}, {lc_ci[1]:.4f}]" if lc_ci else "")
    counts = "/".join(str(fields.get(k) or 0) for k in ("wins", "ties", "losses"))
    return (
        f"{text}, W/T/L {counts}, {fields.get('judged') or 0} judged of {fields.get('n_shared') or 0} shared"
    )


def summary_notes(results: RunResults) -> list[str]:
    """Lines under the table: answer lengths, cuts at the token limit, looping answers, why RAW is missing."""
    notes = elicitation_notes(results)
    for name, task in results.results.items():
        lengths = task.lengths
        if lengths is not None and lengths.answer_words_mean is not None:
            cut = f"{lengths.cut_at_limit:.0%}" if lengths.cut_at_limit is not None else "-"
            looping = f"{lengths.looping:.0%}" if lengths.looping is not None else "-"
            tokens = (
                f", {lengths.answer_tokens_mean:.0f} tokens" if lengths.answer_tokens_mean is not None else ""
            )
            notes.append(
                f"{name}: answers {lengths.answer_words_mean:.0f} words/chars{tokens} on average "
                f"(references {lengths.reference_words_mean or 0:.0f}); cut at the token limit: {cut} "
                f"(max_new_tokens {lengths.max_new_tokens}); looping: {looping}{_copying(task)}"
            )
    missing = sorted(
        {
            str(SPLITS[t.split].raw_answers)
            for t in results.results.values()
            if t.split in SPLITS
            and SPLITS[t.split].raw_answers
            and t.n_generated
            and not t.value(f"{RAW.key}_n")
        }
    )
    if missing:
        notes.append(
            f"{RAW.label} is '-': the instructions' original answers are not in the data "
            f"({', '.join(missing)}); add them to the data folder (or use the Hub) to compute {RAW.label}"
        )
    return notes


def _copying(task: TaskResult) -> str:
    """The share of answers that copy a reference, and of RoleGPT's answers to the same items."""
    measured = task.verbatim
    if measured is None or measured.share is None:
        return ""
    rolegpt, joined = measured.rolegpt_share, measured.joined_share
    if rolegpt is None:
        return f"; copying a reference: {measured.share:.0%}"
    if measured.rolegpt_n == measured.n or joined is None:
        return f"; copying a reference: {measured.share:.0%} (RoleGPT's answers: {rolegpt:.0%})"
    return (
        f"; copying a reference: {measured.share:.0%} (on the {measured.rolegpt_n} items RoleGPT answered "
        f"too: {joined:.0%}, RoleGPT's answers {rolegpt:.0%})"
    )


def entries(results: RunResults) -> list[tuple[str, TaskResult | GroupResult]]:
    """Tasks then groups, by name."""
    return [*results.results.items(), *results.groups.items()]


def floor_notes(results: RunResults) -> list[str]:
    """One line per task and group: what the null baselines score on the same items, under the headline
    protocol and the F-measure (`rolebench.scoring.floors`)."""
    headline = str(results.config.scoring.get("protocol") or "")
    shown = list(dict.fromkeys(p for p in (headline, "rolebench") if p))
    notes = []
    for name, entry in entries(results):
        floors = entry.value("floors") or {}
        parts = []
        for spec, block in floors.items():
            values = [
                f"{LABELS[m]} {' / '.join(cell((block.get(p) or {}).get(m)) for p in shown)}"
                for m in SCORE_COLUMNS
                if any((block.get(p) or {}).get(m) is not None for p in shown)
            ]
            if values:
                parts.append(f"{spec} {', '.join(values)}")
        if parts:
            notes.append(f"{name}: floors ({' / '.join(shown)}): {'; '.join(parts)}")
    return notes


def flag_notes(results: RunResults) -> list[str]:
    """The meaning of every flag the run's tasks and groups carry, one line each."""
    held = [flag for _, entry in entries(results) for flag in entry.value("flags") or []]
    return [f"flag {describe(flag)}" for flag in sorted_flags(held)]


def summary_text(results: RunResults) -> str:
    """The tables (single-turn tasks, session tasks) and their notes, as commands print them."""
    sessions = sessions_table(results)
    if not results.results and sessions:  # a run of session tasks only
        return sessions
    notes = [
        *summary_notes(results),
        *coverage_notes(results),
        *floor_notes(results),
        *unseen_notes(results),
        *flag_notes(results),
    ]
    text = "\n".join([summary_table(results), *([""] + notes if notes else [])])
    return f"{text}\n\n{sessions}" if sessions else text


def failures(results: RunResults, versus: str | None = None) -> str | None:
    """One line counting the samples, sessions and judgments that failed, and what helps: a re-run retries
    failed requests (an API error is never stored) and plays on the sessions they stopped, but an
    unparsable verdict is a stored completion, so it only changes with another parser (`--reparse`),
    judge file or judge. None if nothing failed.
    `versus`: the judgments against that opponent (`results[task]["versus"][versus]`) instead."""
    samples = sum(t.n_failed for t in results.results.values()) if versus is None else 0
    total = sum(t.n for t in results.results.values())
    fields = [
        ((t.value("versus") or {}).get(versus) or {}) if versus else t.model_dump()
        for t in results.results.values()
    ]
    errors = sum(f.get("judge_errors") or 0 for f in fields)
    unparsable = sum(f.get("parse_failures") or 0 for f in fields)
    parts = []
    if samples:
        parts.append(f"{samples} of {total} samples failed (no answer; see `error` in samples/*.jsonl)")
    stalled = {task: s.n_stalled for task, s in results.sessions.items() if s.n_stalled} if not versus else {}
    if stalled:  # a session waits on a call that failed (never stored): the next run plays it on
        shown = ", ".join(f"{task} {n} of {results.sessions[task].n_items}" for task, n in stalled.items())
        parts.append(f"sessions not over ({shown}: a model call failed)")
    if errors:
        against = f" against {versus}" if versus else ""
        parts.append(f"{errors} judgments{against} failed (the judge gave no answer; see judgments/)")
    if samples or errors or stalled:
        parts[-1] += ": run the same command again to retry them (everything else is kept)"
    # a session task whose judge was never read measured nothing (a few failures are counted apart, flagged
    # when as many as the verdicts); stored like an unparsable verdict: the same command gives the same
    unread = [t for t, s in results.sessions.items() if s.failures and s.wins + s.losses + s.ties == 0]
    if unread and not versus:
        parts.append(
            f"no verdict in {', '.join(unread)}: the judge's replies could not be read as verdicts in any "
            "turn (stored: see sessions/*.jsonl); a judge that answers in JSON (another --judge or "
            "--judge-config) plays them again, in another run folder or with --overwrite"
        )
    if unparsable:
        parts.append(
            f"{unparsable} verdicts could not be parsed after every attempt (stored: see judgments/): "
            "running the same command again gives the same; `rolebench judge DIR --reparse` after changing "
            "the judge file's parser, or judge again with --judge-config or another --judge (or --base-url)"
        )
    return "; ".join(parts) if parts else None
