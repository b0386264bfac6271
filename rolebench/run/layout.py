"""A run folder's layout: every name of its files and folders, spelled here and nowhere else.

```
DIR/run.json                     the run record: its definition and config as planned (written first)
DIR/results.json                 derived from the files below by one function (rolebench.evaluation.derive)
DIR/samples/<task>.jsonl         one scored SampleRecord per sample, in dataset order
DIR/generations.sqlite           every answer as it arrived (resume; samples files are rebuilt from it)
DIR/judgments/<judge>/           against the RoleGPT baseline, one folder per judge: judge.json + <task>.jsonl
DIR/judgments/versus/<run>/<judge>/   against another run (`judge --against`), one folder per opponent
DIR/sessions/<task>.jsonl        a session task's turns as played (a header line, then one line per turn)
DIR/sessions/judges/<judge>/<task>.jsonl   a second judge's verdicts on the same turns
DIR/report.html                  `rolebench report`
DIR/.rolebench.lock              one command at a time
```

Every other module asks `rolebench.run.folder.RunFolder` (or a `rolebench.run.judgments.JudgmentSet`)
for a path; these names reach them through it.
"""

from __future__ import annotations

import re

RUN_FILE = "run.json"
RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"
GENERATIONS_FILE = "generations.sqlite"
GENERATIONS_TABLE = "generations"
ANSWER_FIELD = "output"  # the field of a stored answer that holds its text (`cached_model.answer_record`)
JUDGMENTS_DIR = "judgments"
VERSUS_DIR = "versus"
JUDGE_FILE = "judge.json"
REPORT_FILE = "report.html"
SESSIONS_DIR = "sessions"
SESSION_JUDGES_DIR = "judges"
LOCK_FILE = ".rolebench.lock"
STORE_FILES = (GENERATIONS_FILE, f"{GENERATIONS_FILE}-wal", f"{GENERATIONS_FILE}-shm")
RUN_FILES = (RESULTS_FILE, RUN_FILE, SAMPLES_DIR, JUDGMENTS_DIR, SESSIONS_DIR, REPORT_FILE)
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file-safe name for `text` (letters, digits, `.`, `_`, `-`)."""
    return _SLUG.sub("_", text).strip("_.") or "unnamed"
