"""GRPO reward functions (MADS §4.3, SPEC §6) and their registry.

Every reward follows TRL's contract ``f(completions, **kwargs) -> list[float | None]``: the
``grpo`` dataset's gold columns (``gold_action_type``, ``gold_tool_name``,
``gold_tool_arguments``, ``gold_say``) arrive as keyword arguments, completions may be plain
text or chat messages, a malformed completion, prompt or gold value never raises (the
completion scores low), and ``None`` means "this reward does not apply to this sample" (a
tool reward on a gold ``say`` row, a row with malformed gold values). Only a misconfigured
call raises: no ``gold_action_type`` column, or a column without one value per completion.

Conversation-level GRPO (``rollout: conversation``) has its own rewards in
:mod:`rewards.conversation` (``task_success``, ``partial_credit``, ``gold_steps``,
``sage_turns``, ``conversation_format``, ``turn_cost``): they read the ``outcome`` column the
rollout adds, one summary per whole conversation (:func:`summarise_conversation`).

Example:
    >>> from rewards import get_reward_funcs
    >>> [f.__name__ for f in get_reward_funcs(["action_type", "tool_call", "semantic"])]
    ['action_type_reward', 'tool_call_reward', 'semantic_reward']
"""

from rewards.action_type import action_type_reward
from rewards.conversation import summarise_conversation
from rewards.pre_act_format import pre_act_format_reward
from rewards.registry import REWARD_FUNCS, get_reward_func, get_reward_funcs
from rewards.semantic import make_semantic_reward, semantic_reward
from rewards.tool_call import tool_arguments_reward, tool_call_reward, tool_name_reward
from rewards.total import mads_total_reward, make_mads_total_reward

__all__ = [
    "REWARD_FUNCS",
    "action_type_reward",
    "get_reward_func",
    "get_reward_funcs",
    "mads_total_reward",
    "make_mads_total_reward",
    "make_semantic_reward",
    "pre_act_format_reward",
    "semantic_reward",
    "summarise_conversation",
    "tool_arguments_reward",
    "tool_call_reward",
    "tool_name_reward",
]
