"""The one judge protocol and answer parser, with each caller's answer words."""

import doctest

from evaluators.atod.judge import judge_same_goal
from evaluators.sage.judge import ANSWER_WORDS as SAGE_WORDS
from simulation.backends import JudgeBackend, get_backend, judge, parse_judge_answer
from simulation.validator.common import JUDGE_ANSWER_WORDS as VALIDATOR_WORDS


def test_every_backend_is_a_judge():
    # the protocol asks for `complete` only: a backend and a bare class both qualify
    class Bare:
        def complete(self, prompts):
            return ["yes"] * len(prompts)

    assert isinstance(get_backend("fake:"), JudgeBackend)
    assert isinstance(Bare(), JudgeBackend)
    assert not isinstance(object(), JudgeBackend)


def test_default_words_are_yes_no_searched_anywhere():
    # the first whole yes/no word decides, whatever the case or markup around it
    assert parse_judge_answer("**YES**, grounded") is True
    assert parse_judge_answer("I would say no, then yes") is False
    # other verdict words and parts of words are no answer
    assert parse_judge_answer("true") is None
    assert parse_judge_answer("yesterday, nobody") is None
    assert parse_judge_answer("") is None and parse_judge_answer(None) is None


def test_validator_words_accept_true_false_and_pass_fail():
    # yes/true/pass mean True and no/false/fail mean False, first one anywhere wins
    assert parse_judge_answer("Verdict: PASS", words=VALIDATOR_WORDS) is True
    assert parse_judge_answer("False: the amount is invented", words=VALIDATOR_WORDS) is False
    assert parse_judge_answer("it would fail, yes", words=VALIDATOR_WORDS) is False
    # abstain is not one of its words: the search goes on to the next answer word
    assert parse_judge_answer("abstain? no", words=VALIDATOR_WORDS) is False
    assert parse_judge_answer("I cannot tell", words=VALIDATOR_WORDS) is None


def test_sage_words_abstain_decides_as_none():
    # true/yes and false/no are answers; an abstain before them leaves it undecided
    assert parse_judge_answer("True.", words=SAGE_WORDS) is True
    assert parse_judge_answer("no, it is written", words=SAGE_WORDS) is False
    assert parse_judge_answer("abstain, though probably true", words=SAGE_WORDS) is None
    # pass/fail are not SAGE answer words
    assert parse_judge_answer("pass", words=SAGE_WORDS) is None
    assert parse_judge_answer("fail, so false", words=SAGE_WORDS) is False


def test_first_word_reads_only_the_reply_opening():
    # leading punctuation is skipped, and the first word must itself be an answer word
    assert parse_judge_answer("  - Yes, the same goal.", first_word=True) is True
    assert parse_judge_answer("NO", first_word=True) is False
    assert parse_judge_answer("I think yes", first_word=True) is None
    assert parse_judge_answer("yes_or_no", first_word=True) is None
    assert parse_judge_answer("...", first_word=True) is None


def test_atod_same_goal_reads_the_first_word():
    # ATOD asks "Answer with one word: yes or no" and reads only that word
    fake = get_backend("fake:", replies=["Yes.", "no", "Probably yes"])
    pairs = [("book a hotel", "reserve a room")] * 3
    assert judge_same_goal(fake, pairs) == [True, False, None]


def test_docstring_examples_run():
    # every Example in the module's docstrings is executable and correct
    result = doctest.testmod(judge, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted == 6
