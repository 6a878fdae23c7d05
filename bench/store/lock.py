"""The writer lock of a run folder: one writing job at a time.

The lock is an advisory ``flock`` on ``writer.lock`` in the run folder, held by the job's leader (rank 0), so the
kernel (or the NFS lock manager) releases it when its holder dies, however it dies. Every rank of the job also holds a
shared ``flock`` on ``ranks.lock`` while it writes chunks; a new leader takes that one exclusively once before it
cleans the folder, so a rank left running by a job whose leader died (its launcher killed with SIGKILL) is found
rather than raced. The file also says who holds it (PID, host, process start time,
when); a holder that ended cleanly empties it. A writer that finds the file naming a writer which no longer holds the
lock (killed) takes it over with a note. The file itself is never removed: removing a lock file while another process
waits on it would let two processes hold two different files.

On a filesystem without ``flock`` (some FUSE or ``nolock`` NFS mounts) the recorded holder decides alone: a live
process on this host, or any process on another host, keeps the run.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

LOCK = "writer.lock"
RANKS_LOCK = "ranks.lock"
_NO_FLOCK = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


class RunLockedError(FileExistsError):
    """Another live writer holds the run folder (a user error: one line, exit code 2)."""


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), None when unknown."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (tells a reused PID apart), None when unknown."""
    fields = _stat(pid)
    return fields[19] if fields else None


def _alive(holder: dict) -> bool:
    """Whether the process ``holder`` names runs on this host (the same process, not a reused PID, not a zombie
    waiting to be reaped)."""
    pid = holder.get("pid")
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(pid)
    if fields is None:
        return True
    return fields[0] not in ("Z", "X") and holder.get("process_start") in (None, fields[19])


def describe(holder: dict) -> str:
    """``PID 123 on host node7 since 2024-...``."""
    if not holder.get("pid"):
        return "a writer that is starting"
    return f"PID {holder.get('pid')} on host {holder.get('host')} since {holder.get('since')}"


@dataclass
class RunLock:
    """A held writer lock; :meth:`release` gives it back (also done by the kernel when the process dies).

    ``note`` says whose stale lock was taken over, when one was.
    """

    path: Path
    fd: int
    note: str | None = None

    @classmethod
    def acquire(cls, folder: str | Path, **info) -> RunLock:
        """Lock ``folder`` (created if missing) for this process, or raise :class:`RunLockedError` naming the
        holder. ``info`` is recorded beside the PID and host (e.g. the world size)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOCK
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            held = _flock(fd, folder)
            previous = _read(fd)
            here = socket.gethostname()
            if previous and not (previous.get("pid") == os.getpid() and previous.get("host") == here):
                if (previous.get("host") == here and _alive(previous)) or (not held and previous.get("host") != here):
                    raise RunLockedError(_busy(folder, previous))
            note = None
            if previous:
                note = f"{folder}: took over the lock left by {describe(previous)}, which is no longer running"
            _no_other_ranks(folder)
            me = {"pid": os.getpid(), "host": here, "process_start": _process_start(os.getpid()),
                  "since": datetime.now(timezone.utc).isoformat(timespec="seconds"), **info}
            _write(fd, json.dumps(me, sort_keys=True))
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, note)

    def release(self) -> None:
        """Empty the holder record and unlock (closing the file releases the flock)."""
        if self.fd < 0:
            return
        _write(self.fd, "")
        os.close(self.fd)
        self.fd = -1


class RankHold:
    """A rank's shared hold on the run folder while it writes chunks (see the module's docstring)."""

    def __init__(self, folder: str | Path):
        self.fd = os.open(Path(folder) / RANKS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH)
        except OSError as err:
            if err.errno not in _NO_FLOCK:
                os.close(self.fd)
                raise

    def release(self) -> None:
        """Let go of the hold (also done by the kernel when the process dies)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _no_other_ranks(folder: Path) -> None:
    """Raise when a rank of an earlier job still holds the folder."""
    fd = os.open(folder / RANKS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunLockedError(f"{folder}: a rank of an earlier job still writes this run (its leader is gone); stop "
                             "that job's processes, or choose another --out") from None
    except OSError as err:
        if err.errno not in _NO_FLOCK:
            raise
    finally:
        os.close(fd)


def holder(folder: str | Path) -> dict:
    """The recorded holder of ``folder``'s lock ({} when free or never locked)."""
    try:
        text = (Path(folder) / LOCK).read_text()
    except OSError:
        return {}
    return _parse(text)


def _flock(fd: int, folder: Path) -> bool:
    """Take the flock; False when the filesystem has none (the holder record decides); raise when it is held."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunLockedError(_busy(folder, _read(fd))) from None
    except OSError as err:
        if err.errno in _NO_FLOCK:
            return False
        raise
    return True


def _busy(folder: Path, holder: dict) -> str:
    return (f"{folder}: another writer is scoring this run ({describe(holder)}); wait for it to end, or choose "
            "another --out")


def _read(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    return _parse(os.read(fd, 1 << 16).decode("utf-8", "replace"))


def _parse(text: str) -> dict:
    try:
        found = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {"pid": None, "host": "?", "since": "?"}
    return found if isinstance(found, dict) else {}


def _write(fd: int, text: str) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, text.encode())
    os.fsync(fd)
