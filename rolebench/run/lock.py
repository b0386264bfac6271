"""A run folder's lock: one command at a time on a folder, and a folder made for a failed command removed.

`FolderLock.hold` holds the folder for one command: a second command waits up to `wait_s` seconds, then
is refused in one line. Once held, the folder is tidied (`tidy`: what interrupted writes left). A folder
the command created is removed again, still under the lock, when the command fails before storing
anything worth keeping (`worth_keeping`); a command that waited for it makes it again (`create`) or,
reading, says it is gone. The lock file's name is the folder layout's (`rolebench.run.layout`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rolebench.errors import ConfigError, DataError

MAX_TAKES = 5  # a folder removed while waiting for it, made again and locked: this many tries


class FolderLock:
    """The lock of the folder `path`, held through the file `lock_file` in it."""

    def __init__(self, path: Path, lock_file: Path) -> None:
        self.path, self.lock_file = path, lock_file

    @contextmanager
    def hold(
        self,
        *,
        create: bool,
        wait_s: float,
        tidy: Callable[[], object],
        worth_keeping: Callable[[], bool],
    ) -> Iterator[None]:
        """Hold the folder for one command (creating it when `create`); see the module docstring."""
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(
                f"{self.path} is a file, not a run folder", where=str(self.path), fix="choose a folder"
            )
        blocking = next((p for p in self.path.parents if p.exists() and not p.is_dir()), None)
        if create and blocking is not None:
            raise ConfigError(
                f"{blocking} is a file, so no run folder can be made under it",
                where=str(self.path),
                fix="choose a folder whose parents are folders",
            )
        created = not self.path.exists()
        if created and not create:
            raise DataError(
                "no such run folder",
                where=str(self.path),
                fix="pass a folder written by `rolebench evaluate`",
            )
        lock, created = self._take(created, create, wait_s)
        succeeded = False
        try:
            tidy()
            yield
            succeeded = True
        finally:
            # removed while still held: a command waiting on this lock then finds the folder gone
            if created and not succeeded and not worth_keeping():
                shutil.rmtree(self.path, ignore_errors=True)
            lock.release()

    def _take(self, created: bool, create: bool, wait_s: float) -> tuple[FileLock, bool]:
        """The folder's lock, held; and whether this command created the folder. A folder removed while
        this command waited (a failing command removes the folder it created) is made again when
        `create`, else refused in one line."""
        for _ in range(MAX_TAKES):
            self.path.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.lock_file), is_singleton=False, thread_local=False)
            try:
                lock.acquire(timeout=wait_s)
            except Timeout:
                raise ConfigError(
                    "another rolebench command is using this run folder",
                    where=str(self.path),
                    fix=f"wait for it to finish (waited {wait_s:.0f} s), or use another folder",
                ) from None
            except FileNotFoundError:  # removed between mkdir and opening the lock file
                pass
            else:
                if _holds(lock, self.lock_file):
                    return lock, created
                lock.release()  # the folder was removed while this command waited for it
            if not create:
                raise DataError(
                    "no such run folder (the command that created it failed and removed it)",
                    where=str(self.path),
                    fix="pass a folder written by `rolebench evaluate`",
                )
            created = True
        raise ConfigError(  # pragma: no cover - a folder removed again and again by others
            "this run folder keeps being removed by other commands",
            where=str(self.path),
            fix="run one command at a time on it",
        )

    def wait_until_free(self, wait_s: float) -> None:
        """Wait while another process holds the folder (take it with `hold` right after)."""
        if not self.lock_file.is_file():
            return
        lock = FileLock(str(self.lock_file), is_singleton=False, thread_local=False)
        try:
            lock.acquire(timeout=wait_s)
        except Timeout:
            raise ConfigError(
                f"another rolebench command has held this run folder for {wait_s:.0f} s",
                where=str(self.path),
                fix="wait for it to finish, then run the command again",
            ) from None
        lock.release()


def _holds(lock: FileLock, path: Path) -> bool:
    """Whether the file `lock` holds is still the one at `path` (not a lock file removed meanwhile)."""
    fd = lock._context.lock_file_fd  # filelock's open descriptor of the file it locked
    try:
        return fd is not None and os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False
