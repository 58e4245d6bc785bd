"""The backend registry, the shared base behaviour and the `fake:` test helper."""

import doctest

import pytest

import simulation.backends as backends_package
from simulation.backends import (
    BackendError,
    BaseChatBackend,
    ChatBackend,
    FakeBackend,
    OpenAIBackend,
    TransformersBackend,
    async_runner,
    base,
    fake_backend,
    get_backend,
    known_prefixes,
    openai_backend,
    register_backend,
    registry,
    stub_server,
    transformers_backend,
    truncate_at_stop,
)

USER_HI = [{"role": "user", "content": "hi"}]


def test_builtin_prefixes_resolve_to_their_classes():
    # the three built-in prefixes are registered and build the right class
    assert {"fake", "openai", "transformers"} <= set(known_prefixes())
    assert isinstance(get_backend("fake:"), FakeBackend)
    assert isinstance(get_backend("transformers:tiny-lm"), TransformersBackend)
    assert isinstance(get_backend("openai:m@http://127.0.0.1:9/v1"), OpenAIBackend)
    # every built-in satisfies the runtime-checkable protocol
    assert isinstance(get_backend("fake"), ChatBackend)


def test_unknown_prefix_lists_known_ones():
    # the error names the spec and every registered prefix
    with pytest.raises(ValueError) as info:
        get_backend("vllm:qwen")
    message = str(info.value)
    assert "'vllm:qwen'" in message
    assert all(prefix in message for prefix in ("fake", "openai", "transformers"))


@pytest.mark.parametrize(
    ("spec", "expected_form"),
    [
        ("transformers:", "transformers:<model>"),  # no model
        ("transformers:   ", "transformers:<model>"),  # only blanks
        ("openai:gpt-4o-mini", "openai:<model>@<base_url>"),  # no @url
        ("openai:gpt-4o-mini@localhost:8000/v1", "openai:<model>@<base_url>"),  # no scheme
        ("openai:@http://localhost:8000/v1", "openai:<model>@<base_url>"),  # no model
    ],
)
def test_malformed_specs_name_spec_and_expected_form(spec, expected_form):
    # ValueError that quotes the spec and shows the expected form
    with pytest.raises(ValueError) as info:
        get_backend(spec)
    assert repr(spec) in str(info.value) and expected_form in str(info.value)


def test_register_backend_adds_a_prefix_and_refuses_a_taken_one():
    @register_backend("test-reverse")
    class Reverse(BaseChatBackend):
        def __init__(self, spec: str, suffix: str = "") -> None:
            self.spec = spec
            self.suffix = suffix

        def _generate(self, conversations, **generation):
            return [conv[-1]["content"][::-1] + self.suffix for conv in conversations]

    try:
        # options reach the factory; complete() wraps prompts as user messages
        assert get_backend("test-reverse:", suffix="!").complete(["abc"]) == ["cba!"]
        # the same prefix for another factory is refused; re-registering the same is fine
        with pytest.raises(ValueError, match="already registered"):
            register_backend("test-reverse")(FakeBackend)
        register_backend("test-reverse")(Reverse)
        # prefixes with ':' are refused
        with pytest.raises(ValueError, match="without ':'"):
            register_backend("a:b")
    finally:
        registry._REGISTRY.pop("test-reverse", None)


def test_truncate_at_stop_cuts_at_earliest_marker():
    # earliest of several markers wins; empty markers are ignored; no marker → unchanged
    assert truncate_at_stop("say</action>\nUser: x", ["User:", "</action>"]) == "say"
    assert truncate_at_stop("abc", ["", "zz"]) == "abc"
    assert truncate_at_stop("abc", None) == "abc"


def test_generate_checks_its_input():
    backend = get_backend("fake:")
    # a single conversation instead of a batch
    with pytest.raises(ValueError, match="list of conversations"):
        backend.generate(USER_HI)  # type: ignore[arg-type]
    # a message without content names its position
    with pytest.raises(ValueError, match=r"conversations\[1\]\[0\]"):
        backend.generate([USER_HI, [{"role": "user"}]])
    # empty conversation, bad settings
    with pytest.raises(ValueError, match=r"conversations\[0\] must be a non-empty"):
        backend.generate([[]])
    with pytest.raises(ValueError, match="max_new_tokens"):
        backend.generate([USER_HI], max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        backend.generate([USER_HI], temperature=-1)
    with pytest.raises(ValueError, match="prompt strings"):
        backend.complete("one prompt")  # type: ignore[arg-type]
    # an empty batch is fine and returns nothing
    assert backend.generate([]) == []


def test_fake_reply_list_is_consumed_in_order_across_calls():
    backend = get_backend("fake:", replies=["a", "b", "c"])
    # one reply per conversation, in order, continuing across calls
    assert backend.complete(["1", "2"]) == ["a", "b"]
    assert backend.complete(["3"]) == ["c"]
    # running out is an error, not a silent repeat
    with pytest.raises(BackendError, match="exhausted after 3"):
        backend.complete(["4"])
    # calls and settings are recorded for assertions
    assert [conv[0]["content"] for conv in backend.calls] == ["1", "2", "3"]
    assert backend.settings[0]["batch"] == 2 and backend.settings[0]["temperature"] == 0.0


def test_fake_cycle_callable_constant_and_echo():
    # cycle restarts the list
    assert get_backend("fake:", replies=["x", "y"], cycle=True).complete(list("abc")) == [
        "x",
        "y",
        "x",
    ]
    # a callable sees the whole conversation
    convs = [[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]]
    assert get_backend("fake:", replies=lambda conv: str(len(conv))).generate(convs) == ["2"]
    # the spec's argument is a constant reply; without anything, an echo
    assert get_backend('fake:<action type="say">ok</action>').complete(["q"]) == [
        '<action type="say">ok</action>'
    ]
    assert get_backend("fake").complete(["q"]) == ["[fake] q"]
    # stop strings are honoured like a real backend
    assert get_backend("fake:A. B").complete(["q"], stop=[". "]) == ["A"]
    # a callable returning a non-string is reported
    with pytest.raises(BackendError, match="returned 3"):
        get_backend("fake:", replies=lambda conv: 3).complete(["q"])


@pytest.mark.parametrize(
    "module",
    [
        backends_package,
        async_runner,
        base,
        fake_backend,
        openai_backend,
        registry,
        stub_server,
        transformers_backend,
    ],
)
def test_docstring_examples_run(module):
    # every Example in the package's docstrings is executable and correct
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    registry._REGISTRY.pop("echo-doc", None)  # registered by register_backend's example
