"""Checks of Stable-Baselines3 checkpoint files (``model.zip``) that need neither torch nor SB3.

SB3 loads a checkpoint with ``torch.load`` (and unpickles parts of it on request), so a
damaged or hostile file must be refused before it gets there. `check_sb3_zip` reads only
what the zip's directory declares: a regular file under a size limit, safe member names,
the members SB3 writes, declared sizes under a limit (no zip bomb), every member's CRC,
and ``data`` as JSON.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

from yahtzee_env.fileio import UnsafeFileError, read_regular_file
from yahtzee_env.policies.models import ModelFormatError

MAX_SB3_ZIP_BYTES = 1 << 30  # the hard level's checkpoint is ~4 MB
MAX_SB3_UNPACKED_BYTES = 2 << 30
SB3_REQUIRED_MEMBERS = ("data", "policy.pth")


def check_sb3_zip(path: str | os.PathLike) -> None:
    """Raise `ModelFormatError` naming the problem unless ``path`` looks like an intact SB3
    ``model.zip`` (see the module docstring). Reads the file once, bounded."""
    where = os.fspath(path)
    try:
        blob = read_regular_file(path, MAX_SB3_ZIP_BYTES)
    except FileNotFoundError:
        raise ModelFormatError(f"{where}: no such model file") from None
    except (UnsafeFileError, OSError) as err:
        raise ModelFormatError(f"{where}: cannot read model: {err}") from None
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            infos = archive.infolist()
            names = [i.filename for i in infos]
            for name in names:
                if name.startswith(("/", "\\")) or ".." in name.split("/") or "\0" in name:
                    raise ModelFormatError(f"{where}: unsafe member name {name!r}")
            missing = [m for m in SB3_REQUIRED_MEMBERS if m not in names]
            if missing:
                raise ModelFormatError(
                    f"{where}: not a Stable-Baselines3 model (no {', '.join(missing)})"
                )
            unpacked = sum(i.file_size for i in infos)
            if unpacked > MAX_SB3_UNPACKED_BYTES:
                raise ModelFormatError(
                    f"{where}: members unpack to {unpacked:,} bytes, more than the "
                    f"{MAX_SB3_UNPACKED_BYTES:,} allowed"
                )
            bad = archive.testzip()  # reads each member up to its declared size, checks CRCs
            if bad is not None:
                raise ModelFormatError(f"{where}: member {bad!r} is corrupt (CRC mismatch)")
            json.loads(archive.read("data").decode("utf-8"))
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as err:
        raise ModelFormatError(f"{where}: not a readable zip file ({err})") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ModelFormatError(f"{where}: corrupt model data ({err})") from None
    except (OSError, NotImplementedError, RuntimeError) as err:  # e.g. an unknown compression
        raise ModelFormatError(f"{where}: cannot read model zip ({err})") from None
