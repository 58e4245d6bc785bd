"""Publishing a built dataset folder to the Hugging Face Hub, and loading it back.

``push_dataset`` creates the dataset repo, uploads the card (README.md) first and then each
config with ``DatasetDict.push_to_hub(repo_id, config_name=...)``; ``push_to_hub`` keeps an
existing card's text and only adds its ``dataset_info`` metadata, so the final card is ours
plus the features/sizes block. The token comes from the argument, ``HF_TOKEN`` or the login
cache (``huggingface_hub.get_token()``); it is never printed nor written anywhere.

``load_mads_dataset`` reads a local ``build-dataset`` folder (``load_from_disk(dir/config)``)
or, for anything that is not a local path, the Hub (``load_dataset(id, name=config)``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mads_bench.datasets.build import CONFIG_NAMES
from mads_bench.errors import MadsBenchError, UsageError

if TYPE_CHECKING:
    from datasets import Dataset, DatasetDict


class HubError(MadsBenchError, RuntimeError):
    """Publishing to or loading from the Hub failed, or cannot be attempted."""


def _offline() -> bool:
    import huggingface_hub.constants

    env = os.environ.get("HF_HUB_OFFLINE", "")
    return huggingface_hub.constants.HF_HUB_OFFLINE or env.upper() in {"1", "ON", "YES", "TRUE"}


def _check_folder(folder: Path) -> Path:
    missing = [str(folder / n) for n in (*CONFIG_NAMES, "README.md") if not (folder / n).exists()]
    if missing:
        raise FileNotFoundError(
            f"{folder}: not a build-dataset folder; missing {missing} "
            "(run mads-bench build-dataset)"
        )
    return folder / "README.md"


def push_dataset(
    dataset_dir: str | Path, repo_id: str, private: bool = False, token: str | None = None
) -> dict[str, Any]:
    """Push the three configs and the card of a ``build-dataset`` folder to a Hub dataset repo.

    Args:
        dataset_dir (`str | Path`): folder written by :func:`save_dataset`.
        repo_id (`str`): ``owner/name`` of the dataset repo (created if missing).
        private (`bool`): create the repo as private.
        token (`str`, *optional*): Hub token; defaults to ``HF_TOKEN`` / the login cache.

    Returns:
        `dict`: ``{"repo_id", "url", "configs": {name: {split: rows}}}`` (no token).

    Raises:
        `FileNotFoundError`: the folder is incomplete.
        `HubError`: offline mode, no token, or the Hub refused/failed (message names the step).

    Example:
        >>> push_dataset("out/mads", "me/mads-bench", private=True)  # doctest: +SKIP
        {'repo_id': 'me/mads-bench', 'url': 'https://huggingface.co/datasets/me/mads-bench', ...}
    """
    import huggingface_hub
    from datasets import load_from_disk

    card = _check_folder(Path(dataset_dir))
    if _offline():
        raise HubError(
            f"cannot push {dataset_dir} to {repo_id}: HF_HUB_OFFLINE is set, the Hub is not "
            "reachable from this environment; unset HF_HUB_OFFLINE on a machine with network"
        )
    token = token or huggingface_hub.get_token()
    if not token:
        raise HubError("no Hugging Face token: set HF_TOKEN or log in with `hf auth login`")
    api = huggingface_hub.HfApi(token=token)
    step = "create the repo"
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        step = "upload README.md"
        api.upload_file(
            path_or_fileobj=card.read_bytes(),
            path_in_repo="README.md",
            repo_id=repo_id,
            repo_type="dataset",
            commit_message="Add the dataset card",
        )
        sizes = {}
        for name in CONFIG_NAMES:
            step = f"push config {name!r}"
            dataset = load_from_disk(str(Path(dataset_dir) / name))
            dataset.push_to_hub(
                repo_id,
                config_name=name,
                private=private,
                token=token,
                commit_message=f"Upload the {name} config",
            )
            sizes[name] = {split: len(dataset[split]) for split in dataset}
    except Exception as err:  # name the step; the token is never part of the message
        message = str(err).replace(token, "***")
        raise HubError(f"pushing to {repo_id} failed at '{step}': {message}") from None
    return {"repo_id": repo_id, "url": str(url), "configs": sizes}


def load_mads_dataset(
    path_or_hub_id: str, config: str, split: str | None = None
) -> DatasetDict | Dataset:
    """Load one config of a MADS-Bench dataset from a local folder or the Hub.

    Args:
        path_or_hub_id (`str`): a ``build-dataset`` output folder, or a Hub dataset id.
        config (`str`): ``trajectories``, ``sft`` or ``grpo``.
        split (`str`, *optional*): ``train`` or ``test``; None gives the ``DatasetDict``.

    Returns:
        `DatasetDict`, or `Dataset` when ``split`` is given.

    Raises:
        `ValueError`: unknown config or split.
        `FileNotFoundError`: a local folder without that config.
        `HubError`: not a local folder and the Hub could not serve it (e.g. offline).

    Example:
        >>> load_mads_dataset("out/mads", "grpo", split="test").column_names[:2]  # doctest: +SKIP
        ['prompt', 'gold_action_type']
    """
    from datasets import load_dataset, load_from_disk

    if config not in CONFIG_NAMES:
        raise ValueError(f"unknown config {config!r}; expected one of {CONFIG_NAMES}")
    local = Path(path_or_hub_id)
    if local.exists():
        folder = local / config
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no {config!r} config in {local}")
        data = load_from_disk(str(folder))
    else:
        try:
            data = load_dataset(path_or_hub_id, name=config)
        except Exception as err:
            offline = " (HF_HUB_OFFLINE is set)" if _offline() else ""
            raise HubError(
                f"{path_or_hub_id!r} is not a local folder and could not be loaded from the "
                f"Hub{offline}: {type(err).__name__}: {err}"
            ) from None
    if split is None:
        return data
    if split not in data:
        raise UsageError(
            f"{path_or_hub_id}: config {config!r} has no split {split!r} (it has "
            f"{', '.join(data) or 'none'})"
        )
    return data[split]
