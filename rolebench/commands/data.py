"""`rolebench data download | verify | build | push | info`: RoleBench as a versioned Hugging Face dataset."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rolebench.commands._arguments import Subparsers
from rolebench.errors import ConfigError, DataError

_DESCRIPTION = """\
download  fetch the upstream files rolebench uses at a pinned revision, with a checksum manifest
verify    check a local copy (upstream or build) against a checksum manifest
build     turn the upstream layout into Parquet configs + dataset card + checksums (v1.0; --clean: v1.1)
push      upload a build to a Hub dataset repo and tag the commit with its version
info      roles, splits, row counts and missing files of a data source
audit     what each split's test items share with its train file (and with themselves)"""


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "data",
        help="download, verify, build, push and inspect the RoleBench dataset",
        description=_DESCRIPTION,
    )
    p.set_defaults(run=run)
    sub = p.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    for add in (_download_parser, _verify_parser, _build_parser, _push_parser, _info_parser, _audit_parser):
        add(sub)


def _download_parser(sub: Subparsers) -> None:
    from rolebench.data.source import UPSTREAM_REPO, UPSTREAM_REVISION

    d = sub.add_parser(
        "download",
        help="download the upstream files at a pinned revision (resumable)",
        description="Download the files rolebench reads from the upstream Hub dataset at a pinned revision "
        "into a local folder in the Hub layout, with a checksum manifest (checksums.json). An interrupted "
        "download resumes. Use the folder with --data-dir or $ROLEBENCH_DATA.",
    )
    d.add_argument("--repo", default=UPSTREAM_REPO, help=f"dataset repo (default {UPSTREAM_REPO})")
    d.add_argument(
        "--revision", default=UPSTREAM_REVISION, help=f"branch, tag or commit (default {UPSTREAM_REVISION})"
    )
    d.add_argument(
        "--to", type=Path, default=Path("rolebench-data"), help="target folder (default ./rolebench-data)"
    )


def _verify_parser(sub: Subparsers) -> None:
    from rolebench.data.source import UPSTREAM_REPO, UPSTREAM_REVISION

    v = sub.add_parser(
        "verify",
        help="check a local copy against a checksum manifest",
        description="Check every file of a local copy (upstream layout or a `rolebench data build` folder) "
        "against a checksum manifest; exit 1 and list the files that differ or are missing.",
    )
    v.add_argument(
        "dir",
        type=Path,
        nargs="?",
        metavar="DIR",
        help="a local copy (default: $ROLEBENCH_DATA, as `data info`)",
    )
    v.add_argument(
        "--manifest",
        type=Path,
        help="manifest JSON (default: DIR/checksums.json, else rolebench's "
        f"manifest of {UPSTREAM_REPO}@{UPSTREAM_REVISION})",
    )
    v.add_argument("--partial", action="store_true", help="a missing file is reported, not a failure")


def _build_parser(sub: Subparsers) -> None:
    b = sub.add_parser(
        "build",
        help="build the Parquet dataset with its card and checksums",
        description="Turn RoleBench into a versioned dataset that `datasets.load_dataset` reads: one Parquet "
        "config per split, a dataset card and checksums. v1.0 keeps the upstream rows as they are; --clean "
        "builds v1.1 (duplicate rows merged, `type` de-duplicated). Test items found in the train file are "
        "kept in both, and counted in the card (`rolebench data audit` lists them).",
    )
    b.add_argument(
        "source",
        metavar="SOURCE",
        help="where the rows come from: a local folder in the Hub layout (e.g. `rolebench data download`'s), "
        "hub[:REV] (the upstream Hub repo, default revision: the pinned one), a folder written by "
        "`rolebench data build` (a rebuild, e.g. v1.0 -> v1.1), or hf://ORG/NAME@VERSION (a pushed build)",
    )
    b.add_argument("--out", type=Path, required=True, help="output folder (new, empty, or a previous build)")
    b.add_argument(
        "--clean",
        action="store_true",
        help="build v1.1: merge duplicate rows, de-duplicate `type` (leaking test items are kept, listed)",
    )
    b.add_argument("--max-shard-mb", type=float, default=256.0, help="Parquet shard size bound in MB")
    b.add_argument("--repo", help="the Hub repo ORG/NAME it will be pushed to (for the card's examples)")
    b.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _push_parser(sub: Subparsers) -> None:
    u = sub.add_parser(
        "push",
        help="upload a build and tag its version",
        description="Upload a folder written by `rolebench data build` to a Hub dataset repo in one commit, "
        "and tag that commit with the build's version (v1.0, v1.1), so that "
        "`--data-dir hf://ORG/NAME@VERSION` reads exactly these files.",
    )
    u.add_argument(
        "dir", type=Path, metavar="DIR", help="a folder written by `rolebench data build --out DIR`"
    )
    u.add_argument("--repo", required=True, help="target dataset repo ORG/NAME")
    u.add_argument("--version", help="tag (default: the build's version; must match it)")
    u.add_argument("--private", action="store_true", help="create the repo private")


def _info_parser(sub: Subparsers) -> None:
    i = sub.add_parser(
        "info",
        help="roles, splits, counts and missing files of a data source",
        description="Show, for each RoleBench split of a data source, its language, kind, test and train "
        "rows, roles, and the items joined to a RoleGPT baseline answer and to a RAW reference; list the "
        "files the source lacks.",
    )
    i.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="folder, build folder or hf://ORG/NAME@REV (default: $ROLEBENCH_DATA, else the Hub)",
    )
    i.add_argument("--revision", help="revision for the Hub or an hf:// location")


def _audit_parser(sub: Subparsers) -> None:
    a = sub.add_parser(
        "audit",
        help="what each split's test items share with its train file",
        description="Count, for each RoleBench split, the test items whose instruction (or role and "
        "instruction) is in the split's train file, whose reference is a train answer, whose instruction "
        "shares 13 tokens with a train instruction (lm-eval's decontamination rule), that list the RoleGPT "
        "baseline answer among their references, and that repeat an earlier test item. A split without "
        "a train file says so. --json writes the item ids behind every count.",
    )
    a.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="folder, build folder or hf://ORG/NAME@REV (default: $ROLEBENCH_DATA, else the Hub)",
    )
    a.add_argument("--data-dir", help="the former spelling of DIR (still read, with a deprecation line)")
    a.add_argument("--revision", help="revision for the Hub or an hf:// location")
    a.add_argument("--json", type=Path, metavar="FILE", help='write {"splits": {SPLIT: {...}}} with the ids')


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
    from rolebench.data.samples import load_samples, split_files_status
    from rolebench.storage.jsonl import read_jsonl

    source = resolve_source(args.dir, revision=args.revision)
    print(f"source: {source.describe_location()}")
    table, missing = [], []
    for split in upstream_splits():
        status = split_files_status(split.id, source)
        missing += [f for f, ok in status.items() if not ok and f not in missing]
        test = load_samples(split.id, source) if status[split.file("test.jsonl")] else []
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
    if args.json is not None:
        document = {"source": source.describe(), "splits": {k: a.to_json() for k, a in audits.items()}}
        write_json_atomic(args.json, document)
        print(f"wrote {args.json} (the item ids behind every count)")
    return 0
