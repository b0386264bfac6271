"""A small stand-in for the Hugging Face Hub API on 127.0.0.1, for driving the real `huggingface_hub` client.

It keeps git-like repos in memory (commits with their files, branches, tags) and implements only the
endpoints `huggingface_hub` calls for what rolebench does:

- POST /api/repos/create                                   create_repo (409 if it exists)
- POST /api/validate-yaml                                  README.md metadata check of create_commit
- POST /api/{type}s/{repo}/preupload/{rev}                 upload modes (always "regular")
- POST /api/{type}s/{repo}/commit/{rev}                    NDJSON commit (header, file, deleted*)
- POST /api/{type}s/{repo}/tag/{rev}                       create_tag (409 if it exists)
- GET  /api/{type}s/{repo}[/revision/{rev}]                repo_info / dataset_info (sha, siblings)
- GET  /api/{type}s/{repo}/tree/{rev}[/{path}]             list_repo_tree (snapshot_download, delete_patterns)
- HEAD/GET /[{type}s/]{repo}/resolve/{rev}/{path}         file metadata and download (Range supported)

Writes (create, preupload, commit, tag) need an `Authorization: Bearer ...` header (401 otherwise).
Errors carry the `X-Error-Code` header the client maps to RepositoryNotFoundError,
RevisionNotFoundError and EntryNotFoundError. Every request is logged in `requests`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
_REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"
_MODEL = r"(?P<repo>[^/]+/[^/]+)"  # model files resolve without a type prefix


def git_blob_sha1(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Commit:
    sha: str
    files: dict[str, bytes]
    parent: str | None
    message: str


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    private: bool = False
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> str | None:
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        matches = [sha for sha in self.commits if len(revision) >= 7 and sha.startswith(revision)]
        return matches[0] if len(matches) == 1 else None

    def commit(self, branch: str, files: dict[str, bytes], message: str) -> str:
        parent = self.branches.get(branch)
        digest = hashlib.sha1(f"{parent}\n{message}\n".encode())
        for path in sorted(files):
            digest.update(f"{path}\0{git_blob_sha1(files[path])}\n".encode())
        sha = digest.hexdigest()
        self.commits[sha] = Commit(sha, dict(files), parent, message)
        self.branches[branch] = sha
        return sha


class HubStandIn:
    """The server: `start()` returns its base URL; `repos` and `requests` are there to inspect."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.unhandled: list[tuple[str, str]] = []  # requests for endpoints the stand-in does not implement
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stand-in is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> str:
        standin = self

        class Handler(_Handler):
            hub = standin

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def repo(self, repo_type: str, repo_id: str) -> Repo | None:
        return self.repos.get((repo_type, repo_id))

    def downloads(self, suffix: str = "") -> list[str]:
        """Paths of the file GETs (not HEADs) served so far, optionally only those ending with `suffix`."""
        return [p for m, p in self.requests if m == "GET" and "/resolve/" in p and p.endswith(suffix)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: HubStandIn

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    # ---- plumbing
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(
        self,
        status: int,
        payload: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        body = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if raw is None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(
        self, status: int, code: str | None, message: str, headers: dict[str, str] | None = None
    ) -> None:
        extra = dict(headers or {})
        if code:
            extra["X-Error-Code"] = code
        extra["X-Error-Message"] = message
        self._send(status, {"error": message}, extra)

    def _route(self, method: str) -> None:
        url = urlsplit(self.path)
        self.hub.requests.append((method, unquote(url.path)))
        routes = _ROUTES.get(method, [])
        for pattern, handler in routes:
            match = re.fullmatch(pattern, url.path)
            if (
                match
                and handler in _WRITES
                and not self.headers.get("Authorization", "").startswith("Bearer ")
            ):
                self._body()
                self._error(401, None, "Invalid credentials in Authorization header")
                return
            if match:
                with self.hub.lock:
                    handler(
                        self,
                        {k: unquote(v) for k, v in match.groupdict().items() if v is not None},
                        parse_qs(url.query),
                    )
                return
        self.hub.unhandled.append((method, url.path))
        self._error(404, None, f"the Hub stand-in does not implement {method} {url.path}")

    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    # ---- lookups
    def _find(self, groups: dict[str, str]) -> tuple[Repo | None, str | None]:
        repo = self.hub.repo(TYPES[groups.get("type", "models")], groups["repo"])
        if repo is None:
            self._error(404, "RepoNotFound", f"Repository {groups['repo']} not found")
            return None, None
        sha = repo.resolve(groups.get("rev") or "main")
        if sha is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {groups.get('rev')}")
            return repo, None
        return repo, sha

    # ---- endpoints
    def create_repo(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        data = json.loads(self._body() or b"{}")
        repo_id = f"{data.get('organization')}/{data['name']}"
        repo_type = data.get("type") or "model"
        url = f"{self.hub.url}/{'' if repo_type == 'model' else repo_type + 's/'}{repo_id}"
        if (repo_type, repo_id) in self.hub.repos:
            message = "You already created this dataset repo"  # the Hub's 409 names the existing repo's url
            self._send(409, {"error": message, "url": url}, {"X-Error-Message": message})
            return
        repo = Repo(repo_id, repo_type, private=data.get("visibility") == "private")
        repo.commit(
            "main", {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"}, "initial commit"
        )
        self.hub.repos[(repo_type, repo_id)] = repo
        self._send(200, {"url": url, "name": repo_id, "id": repo_id})

    def validate_yaml(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        self._body()
        self._send(200, {"errors": [], "warnings": []})

    def preupload(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        data = json.loads(self._body())
        repo, sha = self._find(groups)
        if sha is None:
            return
        files = repo.commits[sha].files
        self._send(
            200,
            {
                "files": [
                    {
                        "path": f["path"],
                        "uploadMode": "regular",
                        "shouldIgnore": False,
                        "oid": git_blob_sha1(files[f["path"]]) if f["path"] in files else None,
                    }
                    for f in data["files"]
                ]
            },
        )

    def commit(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        repo, sha = self._find(groups)
        if sha is None:
            return
        branch = groups["rev"]
        if branch not in repo.branches:
            self._error(400, None, f"can only commit to a branch, not {branch!r}")
            return
        header = next((item["value"] for item in lines if item["key"] == "header"), {})
        if header.get("parentCommit") not in (None, sha):
            self._error(412, None, "parent commit is not the head of the branch")
            return
        files = dict(repo.commits[sha].files)
        for item in lines:
            key, value = item["key"], item["value"]
            if key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: c for p, c in files.items() if not p.startswith(prefix)}
            elif key != "header":
                self._error(400, None, f"the Hub stand-in does not accept {key!r} operations")
                return
        new_sha = repo.commit(branch, files, header.get("summary", ""))
        kind = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        self._send(
            200,
            {
                "commitUrl": f"{self.hub.url}/{kind}{repo.repo_id}/commit/{new_sha}",
                "commitOid": new_sha,
                "pullRequestUrl": None,
            },
        )

    def tag(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        data = json.loads(self._body())
        repo, sha = self._find(groups)
        if sha is None:
            return
        if data["tag"] in repo.tags or data["tag"] in repo.branches:
            self._error(409, None, f"Tag {data['tag']} already exists")
            return
        repo.tags[data["tag"]] = sha
        self._send(200, {})

    def info(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        repo, sha = self._find(groups)
        if sha is None:
            return
        files = repo.commits[sha].files
        self._send(
            200,
            {
                "id": repo.repo_id,
                "author": repo.repo_id.split("/")[0],
                "sha": sha,
                "private": repo.private,
                "disabled": False,
                "gated": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "siblings": [{"rfilename": p} for p in sorted(files)],
            },
        )

    def tree(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        repo, sha = self._find(groups)
        if sha is None:
            return
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        base = (groups.get("path") or "").strip("/")
        prefix = f"{base}/" if base else ""
        entries, folders = [], set()
        for path, content in sorted(repo.commits[sha].files.items()):
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix) :]
            parts = rest.split("/")
            for depth in range(1, len(parts)):
                folder = prefix + "/".join(parts[:depth])
                if (recursive or depth == 1) and folder not in folders:
                    folders.add(folder)
                    entries.append(
                        {"type": "directory", "oid": git_blob_sha1(folder.encode()), "path": folder}
                    )
            if recursive or len(parts) == 1:
                entries.append(
                    {"type": "file", "oid": git_blob_sha1(content), "size": len(content), "path": path}
                )
        self._send(200, entries)

    def resolve(self, groups: dict[str, str], query: dict[str, list[str]]) -> None:
        repo, sha = self._find(groups)
        if sha is None:
            return
        content = repo.commits[sha].files.get(groups["path"])
        if content is None:
            self._error(404, "EntryNotFound", f"{groups['path']} does not exist", {"X-Repo-Commit": sha})
            return
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{git_blob_sha1(content)}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if match and self.command == "GET":
            start = int(match.group(1))
            end = int(match.group(2)) if match.group(2) else len(content) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
            self._send(206, headers=headers, raw=content[start : end + 1])
            return
        self._send(200, headers=headers, raw=content)


_ROUTES: dict[str, list[tuple[str, Any]]] = {
    "POST": [
        (r"/api/repos/create", _Handler.create_repo),
        (r"/api/validate-yaml", _Handler.validate_yaml),
        (rf"/api/{_REPO}/preupload/(?P<rev>[^/]+)", _Handler.preupload),
        (rf"/api/{_REPO}/commit/(?P<rev>[^/]+)", _Handler.commit),
        (rf"/api/{_REPO}/tag/(?P<rev>[^/]+)", _Handler.tag),
    ],
    "GET": [
        (rf"/api/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.+))?", _Handler.tree),
        (rf"/api/{_REPO}(?:/revision/(?P<rev>[^/]+))?", _Handler.info),
        (rf"/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", _Handler.resolve),
        (rf"/{_MODEL}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", _Handler.resolve),
    ],
    "HEAD": [
        (rf"/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", _Handler.resolve),
        (rf"/{_MODEL}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", _Handler.resolve),
    ],
}
_WRITES = {_Handler.create_repo, _Handler.preupload, _Handler.commit, _Handler.tag}
