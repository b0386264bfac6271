"""`rolebench data download | verify | build | push | info`: RoleBench as a versioned Hugging Face dataset."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rolebench.commands._arguments import Subparsers
from rolebench.commands._data_arguments import DESCRIPTION, add_actions
from rolebench.errors import ConfigError, DataError


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "data",
        help="download, verify, build, push and inspect the RoleBench dataset",
        description=DESCRIPTION,
    )
    p.set_defaults(run=run)
    add_actions(p)


def run(args: argparse.Namespace) -> int:
    actions = {
        "download": _download,
        "verify": _verify,
        "build": _build,
        "push": _push,
        "info": _info,
        "audit": _audit,
    }
    return actions[args.data_command](args)


def _download(args: argparse.Namespace) -> int:
    from rolebench.data.hub import download_upstream
    from rolebench.data.layout import MANIFEST_NAME, upstream_splits
    from rolebench.data.samples import split_files_status
    from rolebench.data.source import DataSource

    result = download_upstream(args.to, repo=args.repo, revision=args.revision)
    print(
        f"downloaded {len(result.manifest.files)} files of {result.repo}@{result.revision} "
        f"into {result.folder}"
    )
    print(f"checksums: {result.folder / MANIFEST_NAME} (rolebench data verify {result.folder})")
    local = DataSource("local", str(result.folder.resolve()))
    missing = sorted(
        {f for s in upstream_splits() for f, ok in split_files_status(s.id, local).items() if not ok}
    )
    for relpath in missing:
        print(f"not in this revision: {relpath}")
    print(f"use it with --data-dir {result.folder} (or ROLEBENCH_DATA={result.folder})")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from rolebench.data.layout import MANIFEST_NAME
    from rolebench.data.manifest import packaged_manifest, read_manifest, verify
    from rolebench.data.source import DATA_DIR_ENV, UPSTREAM_REVISION

    if args.dir is None:
        configured = os.environ.get(DATA_DIR_ENV)
        if not configured:
            raise ConfigError(
                "no folder to verify",
                where="rolebench data verify",
                fix=f"give DIR, or set {DATA_DIR_ENV} to a local copy",
            )
        args.dir = Path(configured)
    if not args.dir.is_dir():
        raise ConfigError(
            f"{args.dir} is not a folder",
            where="rolebench data verify",
            fix="give a local copy in the Hub layout",
        )
    if args.manifest is not None:
        manifest = read_manifest(args.manifest)
    elif (args.dir / MANIFEST_NAME).is_file():
        manifest = read_manifest(args.dir / MANIFEST_NAME)
    else:
        packaged = packaged_manifest(UPSTREAM_REVISION)
        if packaged is None:
            raise ConfigError(
                f"no {MANIFEST_NAME} in {args.dir} and no packaged manifest", fix="pass --manifest"
            )
        manifest = packaged
    print(f"verifying {args.dir} against {manifest.describe()}")
    report = verify(args.dir, manifest, partial=args.partial)
    print("\n".join(report.lines()))
    print("OK" if report.ok else "MISMATCH: the folder differs from the manifest (see the lines above)")
    return 0 if report.ok else 1


def _build(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rolebench.data.build import BuildOptions, build_dataset, parse_build_source
    from rolebench.data.layout import MANIFEST_NAME

    if args.max_shard_mb <= 0:
        raise ConfigError("--max-shard-mb must be positive", where="--max-shard-mb")
    source = parse_build_source(args.source)
    options = BuildOptions(
        args.out,
        clean=args.clean,
        max_shard_bytes=int(args.max_shard_mb * 2**20),
        progress=not args.no_progress,
        hub_repo=args.repo,
    )
    result = build_dataset(source, options)
    print(
        tabulate(
            [[t.config, t.split, t.rows, len(t.files)] for t in result.tables],
            headers=["config", "split", "rows", "shards"],
        )
    )
    origin = result.provenance
    print(f"\nRoleBench {result.version} from {origin['repo']}@{origin['revision']} ({origin['how']})")
    if result.absent:
        print(f"{len(result.absent)} source files are absent (listed in the card; nothing was filled in):")
        for relpath, note in result.absent.items():
            print(f"  missing {relpath}: {note}")
    for change in result.changes:
        print(f"  {result.version}: {change}")
    print(f"{len(result.issues)} known issues are listed in the card")
    print(f"wrote {result.out} (README.md, {MANIFEST_NAME}) in {result.seconds:.1f}s")
    print(
        f'load it: datasets.load_dataset({str(result.out)!r}, "instruction_generalization_zh", split="test")'
    )
    return 0


def _push(args: argparse.Namespace) -> int:
    from rolebench.data.hub import push_dataset

    result = push_dataset(args.dir, args.repo, version=args.version, private=args.private)
    print(f"pushed {args.dir} to {result.repo}: commit {result.commit}, tag {result.version}")
    print(f"{result.url}")
    print(f"use it: rolebench evaluate --data-dir hf://{result.repo}@{result.version} ...")
    return 0


def _info(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rolebench.data.layout import upstream_splits
    from rolebench.data.resolve import resolve_source
    from rolebench.data.samples import read_split, split_files_status
    from rolebench.storage.jsonl import read_jsonl

    source = resolve_source(args.dir, revision=args.revision)
    print(f"source: {source.describe_location()}")
    table, missing = [], []
    for split in upstream_splits():
        status = split_files_status(split.id, source)
        missing += [f for f, ok in status.items() if not ok and f not in missing]
        test = read_split(split, source) if status[split.file("test.jsonl")] else []
        train_path = source.path(split.file("train.jsonl"), required=False)
        train = sum(1 for _ in read_jsonl(train_path)) if train_path else None
        counts = (
            [
                len(test),
                len({s.role for s in test}),
                sum(s.baseline is not None for s in test),
                sum(s.raw_answer is not None for s in test),
            ]
            if test
            else [None] * 4
        )
        table.append([split.id, split.language, split.kind, counts[0], train, *counts[1:]])
    print(
        tabulate(
            table,
            headers=["split", "lang", "kind", "test", "train", "roles", "baseline", "raw"],
            missingval="-",
        )
    )
    for relpath in missing:
        print(f"missing: {relpath}")
    described = source.describe()
    if described.get("dataset_version"):
        print(
            f"packaged dataset {described['dataset_version']}, built from "
            f"{described['upstream']['repo']}@{described['upstream']['revision']}"
        )
    return 0


def _audit(args: argparse.Namespace) -> int:
    from rolebench.data.audit import audit_source, audit_table
    from rolebench.data.resolve import resolve_source
    from rolebench.sessions.audit import audit_sessions, session_audit_lines
    from rolebench.storage.files import write_json_atomic

    given = args.dir
    if args.data_dir is not None:
        if given is not None:
            raise ConfigError(
                "two data folders given (DIR and --data-dir)",
                where="rolebench data audit",
                fix="give one: rolebench data audit DIR",
            )
        print("rolebench: `data audit --data-dir DIR` is deprecated: write `data audit DIR`", file=sys.stderr)
        given = args.data_dir
    source = resolve_source(given, revision=args.revision)
    print(f"source: {source.describe_location()}")
    audits = audit_source(source)
    if not any(a.test_items for a in audits.values()):
        raise DataError(
            f"no RoleBench test file in {source.describe_location()} (looked for "
            f"{', '.join(a.test_file for a in audits.values())})",
            where=source.describe_location(),
            fix="give `rolebench data audit` a folder in the Hub layout (DIR, or ROLEBENCH_DATA)",
        )
    print(audit_table(audits.values()))
    sessions = audit_sessions(source)
    print("\nsession tasks (rolebench.sessions.audit):")
    print("\n".join(f"  {line}" for line in session_audit_lines(sessions.values())))
    if args.json is not None:
        document = {
            "source": source.describe(),
            "splits": {k: a.to_json() for k, a in audits.items()},
            "sessions": {k: a.to_json() for k, a in sessions.items()},
        }
        write_json_atomic(args.json, document)
        print(f"wrote {args.json} (the item ids behind every count)")
    return 0
