"""Every probability of the scripted agents, as named fields of one settings object.

The scripted user and assistant vary their wording with the conversation's RNG: "now and then
add a second sentence", "usually say a date the way dates are said". Each such rate is a field
of :class:`WordingSettings`; the agents read the module's :data:`SETTINGS`. The values are the
ones the shipped trajectories and the realism figures were made with: changing one changes
the words of every seed.

Example:
    >>> SETTINGS.user_slot_form_share, SETTINGS.assistant_slot_form_share
    (0.5, 0.75)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SETTINGS", "WordingSettings"]


@dataclass(frozen=True)
class WordingSettings:
    """How often the scripted agents take each optional wording (each in [0, 1])."""

    # the user (simulation.agents.phrasing, .user)
    user_slot_form_share: float = 0.5  # a slot with kind forms is said so ("reach me at ...")
    goodbye_tail_share: float = 0.3  # a goodbye gets a second sentence ("Have a good day.")
    act_tail_share: float = 0.6  # another act gets a second sentence (yes + thanks)
    facts_split_share: float = 0.25  # three or more values are given in two sentences
    deferred_value_share: float = 0.4  # the opening holds one value back until asked
    mild_tone_share: float = 0.5  # a mildly impatient user adds a remark after the first turn
    vague_objective_share: float = 0.8  # the opening leaves a when/where/for whom for later
    agree_with_value_share: float = 0.6  # a yes repeats a value it heard ("Yes, May 1st.")
    lone_answer_share: float = 0.5  # one asked-for value said alone ("It's 503-...")
    # the user's writing style (simulation.agents.style)
    hedge_share: float = 0.4  # a hedging writer opens with "Um,"
    abbreviation_share: float = 0.5  # a word the writer abbreviates is abbreviated
    no_apostrophe_share: float = 0.7  # a writer who drops apostrophes drops this one
    typo_share: float = 0.25  # a word the writer misspells is misspelled
    # the assistant (simulation.agents.assistant, .speech)
    assistant_slot_form_share: float = 0.75  # a slot read back as its kind says it ("on May 1st")
    sgd_confirm_lead_share: float = 0.7  # a first confirmation opens with an SGD lead
    one_question_confirm_share: float = 0.4  # a first confirmation is one question
    sgd_success_share: float = 0.5  # a write's report opens with "You're all set."
    anything_else_share: float = 0.6  # a report ends with "anything else?"


SETTINGS = WordingSettings()
