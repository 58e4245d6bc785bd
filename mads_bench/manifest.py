"""Run manifests: what produced a resumable output, checked before a run continues it.

Every output a command can continue (``simulate``'s trajectories, ``eval online``'s folder,
step predictions, ``validate``'s accepted/rejected files, ``import-apigen``) gets a manifest
beside it, ``<stem>.manifest.json``: the command line that started it, the package version,
and the **settings** that decide what its records are (seed, agent specs, the fingerprint of
each local model or adapter, step style, turn cap, a hash of the scenario set, ...).

A run that continues the output (``--resume``) passes the settings it would use; any that
differs is refused in one line naming it, so a resumed run can never report records that
another assistant, seed or scenario set produced. An output that holds records but no
manifest (written by hand, or by a version before manifests) is refused too: nothing says
what made it. Settings a run may change freely (concurrency, ``-k``, ``--max-failures``) are
not part of the manifest's settings.

Example:
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = out.write_text("{}\\n")
    >>> write_manifest(out, {"seed": 0, "assistant": "scripted"})
    >>> check_manifest(out, {"seed": 0, "assistant": "scripted"})
    >>> check_manifest(out, {"seed": 1, "assistant": "scripted"})
    Traceback (most recent call last):
    ...
    mads_bench.manifest.ManifestMismatchError: --resume: ... written with seed 0, not 1; ...
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mads_bench.errors import MadsBenchError
from mads_bench.files import atomic_write_text

__all__ = [
    "ManifestMismatchError",
    "check_manifest",
    "content_hash",
    "manifest_path",
    "model_fingerprint",
    "read_manifest",
    "set_command",
    "start_output",
    "write_manifest",
]

_COMMAND: list[str] = []


class ManifestMismatchError(MadsBenchError):
    """A run would continue an output that other settings produced."""


def set_command(argv: Sequence[str]) -> None:
    """Remember the command line being run (the CLI calls this); manifests record it."""
    _COMMAND[:] = ["mads-bench", *argv]


def manifest_path(output: Path | str) -> Path:
    """The manifest beside ``output``: ``runs/t.jsonl`` -> ``runs/t.manifest.json``."""
    output = Path(output)
    return output.with_name(f"{output.stem}.manifest.json")


def content_hash(items: Iterable[str]) -> str:
    """A short sha256 of a sequence of texts (order counts), e.g. the scenarios of a run."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(item.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _file_digest(path: Path, chunk: int = 1 << 20) -> str:
    size = path.stat().st_size
    digest = hashlib.sha256(f"{path.name}:{size}".encode())
    with path.open("rb") as handle:
        digest.update(handle.read(chunk))
        if size > 2 * chunk:
            handle.seek(size - chunk)
            digest.update(handle.read(chunk))
    return digest.hexdigest()


def model_fingerprint(folder: Path | str) -> str:
    """What identifies the weights of a model or adapter folder, fast at any size.

    Each file's name, size, first and last MiB (a retrained adapter of the same shape
    differs in its weights, which follow a small header), hashed together. A folder rewritten
    in place by a new training run gets a new fingerprint; a copy keeps it.
    """
    folder = Path(folder)
    files = [folder] if folder.is_file() else sorted(p for p in folder.rglob("*") if p.is_file())
    return content_hash(
        f"{p.relative_to(folder) if p != folder else p.name}={_file_digest(p)}"
        for p in files
        if not p.name.startswith(".")
    )


def read_manifest(output: Path | str) -> dict[str, Any] | None:
    """The manifest of ``output`` (None when it has none).

    Raises:
        `ManifestMismatchError`: the manifest file is not a JSON object with ``settings``.
    """
    path = manifest_path(output)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ManifestMismatchError(f"{path}: not a run manifest ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict):
        raise ManifestMismatchError(f"{path}: not a run manifest (no 'settings' object)")
    return data


def _holds_records(output: Path) -> bool:
    return output.is_file() and output.stat().st_size > 0


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def check_manifest(output: Path | str, settings: Mapping[str, Any]) -> None:
    """Refuse to continue ``output`` unless its manifest records these ``settings``.

    An output that does not exist yet, or is empty, passes.

    Raises:
        `ManifestMismatchError`: one line naming the first setting that differs, or saying
            the output has no manifest.
    """
    output = Path(output)
    if not _holds_records(output):
        return
    manifest = read_manifest(output)
    if manifest is None:
        raise ManifestMismatchError(
            f"--resume: {output} has no manifest ({manifest_path(output).name}), so nothing says "
            "which settings wrote it; use another output, or delete it to start over"
        )
    recorded = manifest["settings"]
    for key, value in _normal(dict(settings)).items():
        if recorded.get(key) != value:
            before = recorded.get(key, "nothing")
            raise ManifestMismatchError(
                f"--resume: {output} was written with {key} {before}, not {value}; use another "
                "output, or delete it to start over"
            )
    extra = sorted(set(recorded) - set(settings))
    if extra:
        raise ManifestMismatchError(
            f"--resume: {output} was written with {extra[0]} {recorded[extra[0]]}, which this "
            "run does not set; use another output, or delete it to start over"
        )


def write_manifest(output: Path | str, settings: Mapping[str, Any]) -> None:
    """Write the manifest of ``output``: these settings, the command line and the version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("mads-bench")
    except PackageNotFoundError:  # a source checkout that is not installed
        package = "unknown"
    command = _COMMAND or ["python", *sys.argv]
    document = {
        "output": Path(output).name,
        "command": shlex.join(command),
        "mads_bench": package,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": _normal(dict(settings)),
    }
    atomic_write_text(manifest_path(output), json.dumps(document, indent=2) + "\n")


def start_output(output: Path | str, settings: Mapping[str, Any], *, resume: bool) -> None:
    """Record the manifest of an output a run has just opened (after `check_manifest`).

    A resumed output that holds records keeps its manifest (checked, and naming the command
    that started it); a new or empty one gets these settings now, replacing any stale manifest.
    """
    output = Path(output)
    if resume and _holds_records(output) and read_manifest(output) is not None:
        return
    write_manifest(output, settings)
