"""The actions of `rolebench data` and their flags (download, verify, build, push, info, audit); what
each does is in `rolebench.commands.data`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers

DESCRIPTION = """\
download  fetch the upstream files rolebench uses at a pinned revision, with a checksum manifest
verify    check a local copy (upstream or build) against a checksum manifest
build     turn the upstream layout into Parquet configs + dataset card + checksums (v1.0; --clean: v1.1)
push      upload a build to a Hub dataset repo and tag the commit with its version
info      roles, splits, row counts and missing files of a data source
audit     what each split's test items share with its train file (and with themselves)"""


def add_actions(p: argparse.ArgumentParser) -> None:
    """The ACTION subcommands of `rolebench data`, each with its flags."""
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
        "a train file says so. The session tasks too: RPBench-Auto's repeated characters, greetings and "
        "items, and the RoleBench roles' greeting or profile sentences found in their test answers. --json "
        "writes the item ids behind every count.",
    )
    a.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="folder, build folder or hf://ORG/NAME@REV (default: $ROLEBENCH_DATA, else the Hub)",
    )
    a.add_argument("--data-dir", help="the former spelling of DIR (still read, with a deprecation line)")
    a.add_argument("--revision", help="revision for the Hub or an hf:// location")
    a.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help='write {"splits": {SPLIT: {...}}, "sessions": {TASK: {...}}} with the ids',
    )
