"""Read an offline W&B run file (`offline-run-*/run-*.wandb`) back, for assertions in tests.

wandb 0.31 no longer ships a Python reader for its transaction log, so this is a minimal one:
the file is a 7-byte `:W&B` header, then 32 KiB blocks of records framed like LevelDB's log
(4-byte CRC, 2-byte length, 1-byte type FULL/FIRST/MIDDLE/LAST), each a `wandb.proto` Record.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_BLOCK = 32768
_HEADER = 7


@dataclass
class OfflineRun:
    """What a run logged: run metadata, config (initial + updates) and history rows."""

    project: str = ""
    name: str = ""
    tags: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)


def _chunks(data: bytes) -> list[bytes]:
    assert data[:4] == b":W&B", "not a W&B transaction log"
    pos, out, pending = _HEADER, [], b""
    while pos + _HEADER <= len(data):
        left = _BLOCK - pos % _BLOCK
        if left < _HEADER:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + _HEADER])
        if length == 0 and kind == 0:  # block padding
            pos += left
            continue
        chunk = data[pos + _HEADER : pos + _HEADER + length]
        pos += _HEADER + length
        if kind == 1:
            out.append(chunk)
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            out.append(pending + chunk)
            pending = b""
    return out


def _items(items: Any) -> dict[str, Any]:
    return {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in items}


def read_offline_run(wandb_dir: Path) -> OfflineRun:
    """Parse the single offline run under `wandb_dir` (the `WANDB_DIR` of the recipe)."""
    from wandb.proto import wandb_internal_pb2 as pb

    files = sorted(Path(wandb_dir).glob("wandb/offline-run-*/run-*.wandb"))
    assert len(files) == 1, f"expected one offline run under {wandb_dir}, found {files}"
    run = OfflineRun()
    for chunk in _chunks(files[0].read_bytes()):
        record = pb.Record()
        record.ParseFromString(chunk)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run.project, run.name = record.run.project, record.run.display_name
            run.tags = list(record.run.tags)
            run.config.update(_items(record.run.config.update))
        elif kind == "config":
            run.config.update(_items(record.config.update))
        elif kind == "history":
            run.history.append(_items(record.history.item))
    return run
