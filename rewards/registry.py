"""Reward registry: resolve reward names (or dotted import paths) to TRL reward functions.

Names are what a GRPO YAML config lists under ``reward_funcs``. A name with a colon selects
a factory setting, e.g. ``semantic:mpnet`` builds ``make_semantic_reward("mpnet")``.
Anything else containing a dot is imported: ``package.module.function`` (or
``package.module:function``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from rewards.action_type import action_type_reward
from rewards.conversation import CONVERSATION_REWARDS
from rewards.pre_act_format import pre_act_format_reward
from rewards.sage_penalty import sage_penalty_reward
from rewards.semantic import RewardFunc, make_semantic_reward, semantic_reward
from rewards.tool_call import tool_arguments_reward, tool_call_reward, tool_name_reward
from rewards.tool_choice import tool_argument_overlap_reward, tool_choice_reward
from rewards.total import mads_total_reward, make_mads_total_reward

REWARD_FUNCS: dict[str, RewardFunc] = {
    "action_type": action_type_reward,
    "tool_call": tool_call_reward,
    "tool_name": tool_name_reward,
    "tool_arguments": tool_arguments_reward,
    "tool_choice": tool_choice_reward,
    "tool_argument_overlap": tool_argument_overlap_reward,
    "semantic": semantic_reward,
    "pre_act_format": pre_act_format_reward,
    "mads_total": mads_total_reward,
    "sage": sage_penalty_reward,
    **CONVERSATION_REWARDS,
}
"""Every registered reward by name: step rewards, then the conversation-mode rewards
(`rewards.conversation`, marked ``rollout = "conversation"``)."""

REWARD_FACTORIES: dict[str, Callable[[str], RewardFunc]] = {
    "semantic": make_semantic_reward,
    "mads_total": make_mads_total_reward,
}
"""Rewards that take a setting (the sentence encoder), as ``name:setting``."""


def _import_path(path: str) -> RewardFunc:
    module_name, _, attribute = path.rpartition(":") if ":" in path else path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"reward {path!r}: cannot import module {module_name!r}: {err}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ValueError(f"reward {path!r}: {module_name!r} has no callable {attribute!r}")
    return function


def get_reward_func(name: str) -> RewardFunc:
    """Resolve one reward name, ``name:setting``, or dotted import path.

    Args:
        name (`str`): A key of `REWARD_FUNCS`, ``semantic:<encoder>`` /
            ``mads_total:<encoder>``, or ``package.module.function``.

    Returns:
        `Callable`: The reward function.

    Raises:
        `ValueError`: For an unknown name or a path that does not import.

    Example:
        >>> get_reward_func("tool_call").__name__
        'tool_call_reward'
        >>> get_reward_func("semantic:mpnet").__name__
        'semantic_reward_mpnet'
    """
    if name in REWARD_FUNCS:
        return REWARD_FUNCS[name]
    base, _, setting = name.partition(":")
    if setting and base in REWARD_FACTORIES:
        return REWARD_FACTORIES[base](setting)
    if "." in name:
        return _import_path(name)
    raise ValueError(
        f"unknown reward {name!r}; registered: {sorted(REWARD_FUNCS)}, factories "
        f"{sorted(f'{k}:<model>' for k in REWARD_FACTORIES)}, or a dotted import path"
    )


def get_reward_funcs(names: list[str] | str) -> list[RewardFunc]:
    """Resolve a list of reward names (see `get_reward_func`), keeping their order.

    Example:
        >>> [f.__name__ for f in get_reward_funcs(["action_type", "rewards.semantic_reward"])]
        ['action_type_reward', 'semantic_reward']
    """
    if isinstance(names, str):
        names = [names]
    return [get_reward_func(name) for name in names]
