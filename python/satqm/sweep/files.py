"""Files and run folders that appear complete or not at all.

A file is written under a temporary name, flushed to disk and renamed. A run
folder is written as ``ROOT/.tmp-<run_id>-<host>-<pid>-<random>/`` and
renamed to ``ROOT/<run_id>`` in one step (:func:`publish`), so a crash leaves
at most a ``.tmp-*`` folder, which :func:`remove_tmp_dirs` deletes and
names. ``ROOT`` is the folder that holds the run folders: ``runs/`` of a
sweep folder, or of a paper reproduction.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

TMP_PREFIX = ".tmp-"

#: ``errno`` values that mean no more can be written: the disk, or the
#: user's quota, is full.
DISK_FULL = frozenset(e for e in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if e)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or quota) is full."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


# ----- files -----------------------------------------------------------------


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be opened elsewhere
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def _tmp_name(path: Path) -> Path:
    return path.with_name(f"{TMP_PREFIX}{path.name}.{os.getpid()}.{secrets.token_hex(4)}")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` under a temporary name, flush it to disk, rename it."""
    tmp = _tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def write_json_atomic(path: Path, doc: Any) -> None:
    text = json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def write_parquet_atomic(path: Path, df: pd.DataFrame) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    tmp = _tmp_name(path)
    try:
        pq.write_table(table, tmp, compression="zstd")
        fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# ----- run folders -----------------------------------------------------------


def new_tmp_dir(root: Path, rid: str) -> Path:
    """A fresh, empty ``ROOT/.tmp-<rid>-<host>-<pid>-<random>`` folder."""
    host = socket.gethostname().split(".")[0].replace("-", "_") or "host"
    tmp = root / f"{TMP_PREFIX}{rid}-{host}-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir(parents=True)
    return tmp


def tmp_dirs(root: Path) -> list[Path]:
    """Unfinished run folders (``ROOT/.tmp-*``) left by interrupted workers."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.name.startswith(TMP_PREFIX) and p.is_dir())


def tmp_run_id(p: Path) -> str:
    """The run id in the name of a ``.tmp-<run_id>-<host>-<pid>-<random>``
    folder (the host has no ``-``; the run id may)."""
    return p.name[len(TMP_PREFIX) :].rsplit("-", 3)[0]


def remove_tmp_dirs(root: Path) -> list[str]:
    """Delete the unfinished run folders in ``root``; returns their run ids."""
    ids = []
    for p in tmp_dirs(root):
        ids.append(tmp_run_id(p))
        shutil.rmtree(p, ignore_errors=True)
    return ids


def publish(tmp: Path, final: Path, marker: str) -> None:
    """Make the finished folder ``tmp`` visible as ``final`` in one rename.

    ``marker`` is the file whose presence in a folder means it is complete.
    """
    for f in tmp.iterdir():
        fsync_file(f)
    fsync_dir(tmp)
    try:
        os.rename(tmp, final)
    except OSError:
        if (final / marker).is_file():
            # Another attempt at the same run (a retried task) got there
            # first; its files are the same bytes.
            shutil.rmtree(tmp, ignore_errors=True)
            return
        if not final.exists():
            raise
        # An incomplete folder under the final name (made by hand, or by an
        # older satqm that wrote in place): set it aside, then publish.
        aside = final.with_name(f"{TMP_PREFIX}{final.name}-old-{secrets.token_hex(4)}")
        os.rename(final, aside)
        shutil.rmtree(aside, ignore_errors=True)
        os.rename(tmp, final)
    fsync_dir(final.parent)
