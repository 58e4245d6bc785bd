"""Role-confusion check: users acting as the assistant are caught by rules or by MiniLM."""

from simulation.validator import validate_trajectory
from simulation.validator.prototypes import ASSISTANT_PROTOTYPES
from simulation.validator.role_confusion import rule_findings, sentences
from tests.simulation.validator.corrupt import TRANSFER, reasons, with_user


def _roles(trajectory, scenarios, embedder):
    verdict = validate_trajectory(trajectory, scenarios[TRANSFER], embedder=embedder)
    return verdict["checks"]["role_confusion"], reasons(verdict, "role_confusion")


def test_clean_user_passes(transfer, scenarios, embedder):
    check, found = _roles(transfer, scenarios, embedder)
    # the scripted user never sounds like the assistant; MiniLM was consulted
    assert found == [] and check["decided_by"] == "embedding"


def test_user_offers_help_rule(transfer, scenarios, embedder):
    # message 5 (the user's "yes") becomes a service-desk greeting
    bad = with_user(transfer, 5, "Yes. How can I help you today?")
    check, found = _roles(bad, scenarios, embedder)
    assert (
        found[0] == "turn 1 (message 5): user acts as the assistant: offers help: 'How can I help'"
    )
    assert check["decided_by"] == "rules"


def test_user_asks_the_assistants_question(transfer, scenarios, embedder):
    # the user asks for the customer's own details, like an agent would
    bad = with_user(transfer, 5, "Before that, could you tell me your customer ID?")
    _, found = _roles(bad, scenarios, embedder)
    assert found[0].startswith(
        "turn 1 (message 5): user acts as the assistant: asks the assistant's question"
    )


def test_user_writes_pre_act_markup(transfer, scenarios, embedder):
    # a user message that contains an assistant step
    bad = with_user(transfer, 5, '<think>ok</think><action type="say">Done.</action>')
    _, found = _roles(bad, scenarios, embedder)
    assert (
        found[0] == "turn 1 (message 5): user acts as the assistant: writes assistant "
        "markup: '<think'"
    )


def test_assistant_sounding_sentence_embedding(transfer, scenarios, embedder):
    # no rule matches this sentence; MiniLM puts it next to the assistant prototypes
    text = "What date would you like to travel on?"
    assert rule_findings(text) == []
    check, found = _roles(with_user(transfer, 5, text), scenarios, embedder)
    assert len(found) == 1 and found[0].startswith(
        "[embedding] turn 1 (message 5): user sounds like the assistant"
    )
    assert check["decided_by"] == "embedding"


def test_rules_leave_user_requests_alone():
    # a customer asking for help is not an assistant offering it
    assert rule_findings("Can you help me cancel my order? What's the refund policy?") == []


def test_sentences_skip_field_lists():
    # "label: value" detail lists are what users give; they are not scored
    assert sentences("Details: order ID: O1; reason: late.\nWhere is my parcel now? [DONE]") == [
        "Where is my parcel now?"
    ]


def test_rule_only_embedder_relates_no_message_to_a_prototype():
    # NO_EMBEDDINGS gives each text its own axis, and past the axes' count the zero vector:
    # whichever is seen first, prototypes or messages, the embedding stage never fires
    from mads_bench.embedding import SentenceEncoder
    from simulation.validator.aggregate import _Orthogonal

    for prototypes_first in (True, False):
        embedder = SentenceEncoder(_Orthogonal())
        texts = [f"message number {i}" for i in range(_Orthogonal.dimension + 50)]
        if prototypes_first:
            prototypes = embedder.encode(list(ASSISTANT_PROTOTYPES))
        messages = embedder.encode(texts)
        if not prototypes_first:
            prototypes = embedder.encode(list(ASSISTANT_PROTOTYPES))
        assert float((messages @ prototypes.T).max()) == 0.0
        # the same text, the same vector
        assert (embedder.encode(["message number 7"]) == messages[7]).all()
