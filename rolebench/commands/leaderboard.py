"""`rolebench leaderboard build | publish`: tables and a web page from run folders; upload to the Hub."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from model_adapters.secrets import secret_from_env
from rolebench.commands._arguments import Subparsers
from rolebench.errors import ConfigError


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "leaderboard",
        help="build leaderboard tables (Markdown, CSV, LaTeX, HTML) or publish them to the Hub",
        description="Build leaderboard tables from results.json files, or publish a built folder to the Hub.",
    )
    sub = p.add_subparsers(dest="leaderboard_command", metavar="ACTION", required=True)

    b = sub.add_parser(
        "build",
        help="collect results.json files into tables and a web page",
        description="Collect results.json files (folders are searched recursively) into boards: one "
        "table per (split, scoring protocol, dataset files, judge, task versions), beside the "
        "paper's reported numbers, and one board per session task (and group) played the same way, "
        "with ratings across its models. Writes leaderboard.md, .csv, .tex, .json and index.html (and "
        "sessions.csv where there are session boards), and copies every results.json (and a run's "
        "session turns, session_turns.json) into OUT/results/<run>/ (what `leaderboard publish` uploads "
        "with the tables: "
        "`leaderboard build OUT/results` makes the same tables again).",
    )
    b.add_argument(
        "results", nargs="+", type=Path, help="run folders, folders of runs, or results.json files"
    )
    b.add_argument("--out", type=Path, required=True, help="folder for the tables and the page")
    b.add_argument("--title", default="RoleBench leaderboard", help="page and Markdown title")
    b.add_argument("--no-reference", action="store_true", help="leave out the paper's reported rows")
    b.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="KEY=NAME",
        help="the name tables give a model, KEY a run (its folder, as the tables list it) or a model spec, "
        "e.g. --name smollm2:135m='SmolLM2-135M-Instruct (Q4_1)'; repeatable (default: the spec)",
    )
    b.set_defaults(run=run_build)

    u = sub.add_parser(
        "publish",
        help="upload a built leaderboard folder to a Hub dataset repo",
        description="Upload the tables and every results.json of a built folder to a Hub dataset "
        "repo (one commit), and optionally write a model's eval results as model-card metadata.",
    )
    u.add_argument("folder", type=Path, help="a folder written by `rolebench leaderboard build`")
    u.add_argument("--repo", help="Hub dataset repo ORG/NAME to upload to (created if missing)")
    u.add_argument("--private", action="store_true", help="create the dataset repo as private")
    u.add_argument("--message", help="commit message")
    u.add_argument("--endpoint", help="Hub URL (default: $HF_ENDPOINT or https://huggingface.co)")
    u.add_argument("--dry-run", action="store_true", help="list what would be uploaded; send nothing")
    u.add_argument("--model", help="the model (name or spec) whose rows become model-card eval results")
    u.add_argument(
        "--model-card-repo", help="model repo ORG/NAME whose card gets the model-index eval results"
    )
    u.add_argument("--model-index-out", type=Path, help="write the model-index YAML block to this file")
    u.set_defaults(run=run_publish)


def run_build(args: argparse.Namespace) -> int:
    from rolebench.leaderboard.build import JSON, RESULTS_DIR, build
    from rolebench.leaderboard.items import ITEM_SCORES_FILE
    from rolebench.leaderboard.rows import SPLIT_LABELS
    from rolebench.leaderboard.session_turns import SESSION_TURNS_FILE

    boards, written = build(
        args.results,
        args.out,
        title=args.title,
        reference=not args.no_reference,
        names=model_names(args.name),
    )
    session_boards = json.loads((args.out / JSON).read_text(encoding="utf-8")).get("session_boards", [])
    print(f"{built_line(boards, session_boards)}; wrote:")
    for board in boards:
        if board.unranked_note():
            print(
                f"  {SPLIT_LABELS[board.split]} ({board.protocol} · {board.dataset}): {board.unranked_note()}"
            )
    for board in session_boards:
        runs = sum(row["source"] == "ours" for row in board["rows"])
        print(f"  sessions: {board['heading']}: {runs} run(s){'; ' + board['note'] if board['note'] else ''}")
    copies = [p for p in written if p.is_relative_to(args.out / RESULTS_DIR)]
    for path in written:
        if path not in copies:
            print(f"  {path}")
    scores = sum(1 for p in copies if p.name == ITEM_SCORES_FILE)
    turns = sum(1 for p in copies if p.name == SESSION_TURNS_FILE)
    kept = f"; {scores} {ITEM_SCORES_FILE}, the ranked runs' per-item scores" if scores else ""
    kept += f"; {turns} {SESSION_TURNS_FILE}, the runs' session turns" if turns else ""
    results = len(copies) - scores - turns
    print(f"  {args.out / RESULTS_DIR}/ ({results} results.json, the tables' sources{kept})")
    return 0


def built_line(boards: list[Any], session_boards: list[dict[str, Any]]) -> str:
    """What a build made: the single-turn boards' rows (the paper's boards apart) and the session boards'
    runs, each part only where there is one (a sessions-only build says nothing of single-turn rows)."""
    ours = sum(1 for b in boards if not b.reference for _ in b.rows)
    ranked, paper = sum(not b.reference for b in boards), sum(b.reference for b in boards)
    parts = [f"{ours} rows in {ranked} boards (+{paper} paper boards)"] if ranked or paper else []
    if session_boards:
        runs = sum(row["source"] == "ours" for board in session_boards for row in board["rows"])
        parts.append(f"{runs} session run(s) in {len(session_boards)} session board(s)")
    return ", ".join(parts) or "no rows"


def model_names(given: list[str]) -> dict[str, str]:
    """`--name KEY=NAME` flags as {key: name}."""
    names = {}
    for item in given:
        key, sep, name = item.partition("=")
        if not sep or not key.strip() or not name.strip():
            raise ConfigError(
                f"bad --name {item!r}",
                where="--name",
                fix="write RUN=NAME or SPEC=NAME, e.g. smollm2:135m=SmolLM2",
            )
        names[key.strip()] = name.strip()
    return names


def run_publish(args: argparse.Namespace) -> int:
    from rolebench.leaderboard import publish as hub_publish
    from rolebench.leaderboard.boards import collect

    if not (args.repo or args.model_card_repo or args.model_index_out):
        raise ConfigError(
            "nothing to publish",
            where="leaderboard publish",
            fix="give --repo, --model-card-repo and/or --model-index-out",
        )
    token = secret_from_env("HF_TOKEN")
    if args.repo:
        hub_publish.check_repo_id(args.repo, "--repo")
        files = hub_publish.files_to_publish(args.folder)
        if args.dry_run:
            print(f"would upload {len(files)} files to datasets/{args.repo}:")
            print("\n".join(f"  {f}" for f in files))
        else:
            url = hub_publish.publish_folder(
                args.folder,
                args.repo,
                endpoint=args.endpoint,
                token=token,
                private=args.private or None,
                message=args.message,
            )
            print(f"uploaded {len(files)} files: {url}")
    if args.model_card_repo or args.model_index_out:
        index = hub_publish.model_index(collect([args.folder], reference=False), args.model)
        if args.model_index_out:
            print(f"wrote {hub_publish.write_model_index(args.model_index_out, index)}")
        if args.model_card_repo and args.dry_run:
            metrics = sum(len(r["metrics"]) for entry in index for r in entry["results"])
            print(f"would merge {metrics} metrics into the model card of {args.model_card_repo}")
        elif args.model_card_repo:
            url = hub_publish.update_model_card(
                args.model_card_repo, index, endpoint=args.endpoint, token=token
            )
            print(f"updated the model card of {args.model_card_repo}: {url}")
    return 0
