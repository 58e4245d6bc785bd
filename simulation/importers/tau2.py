"""τ²-bench domain -> a MADS domain pack: tools, seed state, policy and one scenario per task.

Reads a τ²-bench domain folder (``db.json``, ``policy.md`` and ``tasks_<split>.json``, or a
τ²-bench checkout's ``data/tau2/domains/<domain>/`` with ``tasks.json`` and
``split_tasks.json``) at run time and writes a pack folder that every command loads with
``--domain-dir PACK``:

- ``domain.yaml``: the manifest, the policy as the assistant's domain rules, and the module of
  the tool handlers (written for mads-bench from the policy: :mod:`mads_bench.tau2.retail`);
- ``tools.yaml``: the tool specs (JSON-Schema parameters, read/write tags);
- ``seed.json``: the database as tables of records (``products``, ``users``, ``orders``) plus
  two of ours: ``session`` (the authenticated customer) and ``transfers`` (hand-offs);
- ``scenarios.yaml``: one scenario per task (below); with ``adversities`` also an ``unhappy``
  variant of each, with MADS behaviors injected on top (marked by its id and complexity);
- ``import.json`` and ``README.md``: what was imported, per-tool counts, the source and its
  licence.

A task becomes a scenario as follows. The gold actions are the gold workflow. They are replayed
on a fresh copy of the seed state: an argument value that an earlier gold call returned (an
item id from the order, a payment method from the profile) is the assistant's to find; any
other value (name, zip, email, an order id the user quotes, a new address, a cancellation
reason) is a slot the user knows (a hard constraint); the assistant composes ``expression`` and
``summary`` itself. Success is τ²-bench's: the final database equals the gold replay's (the
task-success state check) and every ``communicate_info`` string was said (``must_say``). The
user's instructions become the LLM user's brief (``user_brief``) and, in the first person,
the objective the scripted user opens with. A task whose gold neither changes nor tells anything
(τ²-bench rewards leaving the database alone: the request breaks the policy) is an
``impossible`` scenario: the assistant must decline it with a reason, so an assistant that
does nothing does not pass it.

Example:
    >>> first_person("You want to cancel your order; if the agent asks you, say you are sure.")
    'I want to cancel my order; if the agent asks me, say I am sure.'
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
import zlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mads_bench.catalog import Domain, load_pack, load_personas
from mads_bench.data_model import Scenario, ToolCall
from mads_bench.database import ToolError
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text
from mads_bench.loading import CatalogError
from mads_bench.pre_act import canonical_json
from mads_bench.text import normalise
from simulation.agents.text import value_in
from simulation.tool_backend import ToolBackend

HANDLERS = {"retail": "mads_bench.tau2.retail"}
"""τ²-bench domain -> the package holding its ``tools.yaml`` and ``handlers.py``."""
KEYS = {"products": "product_id", "users": "user_id", "orders": "order_id"}
OWN_TABLES = {"session": ("session_id", [{"session_id": "current", "user_id": None}]),
              "transfers": ("transfer_id", [])}  # fmt: skip
TODAY = "2024-05-15"  # the retail policy has no date rule; any fixed day keeps runs reproducible
COMPOSED = ("expression", "summary")  # arguments the assistant writes itself
SOURCE = "sierra-research/tau2-bench (MIT licence)"
NO_ACTION_FALLBACK = (
    "Explain that the store's policy does not allow the request as asked, so nothing was "
    "changed, and offer to help with what the policy does allow."
)

__all__ = ["Tau2Import", "first_person", "import_tau2"]


@dataclass
class Tau2Import:
    """What one import wrote and found."""

    pack: str
    name: str
    split: str
    tasks: int
    scenarios: int
    tool_calls: dict[str, int] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)
    authentication_added: list[str] = field(default_factory=list)
    dropped_lookups: dict[str, list[str]] = field(default_factory=dict)
    refused_writes: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------- reading the source
def _source_folder(tau2_dir: Path, domain: str) -> Path:
    for folder in (tau2_dir, tau2_dir / "data" / "tau2" / "domains" / domain):
        if (folder / "db.json").is_file():
            return folder
    raise UsageError(
        f"--tau2-dir {tau2_dir}: no db.json there nor in data/tau2/domains/{domain}/ "
        "(a τ²-bench domain folder or checkout)"
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CatalogError(path, "", f"cannot read file ({err.strerror})") from None
    except json.JSONDecodeError as err:
        raise CatalogError(path, f"line {err.lineno} column {err.colno}", err.msg) from None


def _read_tasks(folder: Path, split: str) -> tuple[Path, list[dict[str, Any]]]:
    own = folder / f"tasks_{split}.json"
    if own.is_file():
        path, tasks = own, _read_json(own)
    else:
        path = folder / "tasks.json"
        if not path.is_file():
            raise UsageError(f"--split {split}: {folder} has neither tasks_{split}.json nor "
                             "tasks.json")  # fmt: skip
        tasks = _read_json(path)
        splits_file = folder / "split_tasks.json"
        if split != "all" and splits_file.is_file():
            splits = _read_json(splits_file)
            if not isinstance(splits, dict) or split not in splits:
                known = sorted(splits) if isinstance(splits, dict) else []
                raise UsageError(f"--split {split}: not in {splits_file} (known: {known})")
            wanted = {str(t) for t in splits[split]}
            if isinstance(tasks, list):
                tasks = [t for t in tasks if isinstance(t, dict) and str(t.get("id")) in wanted]
                if not tasks:  # an empty pack at exit 0 would look like a successful import
                    raise CatalogError(
                        path, "", f"no task has an id of split {split!r} in {splits_file}"
                    )
    if not isinstance(tasks, list):
        raise CatalogError(path, "", "expected a JSON array of tasks")
    if not tasks:
        raise CatalogError(path, "", "no tasks (an empty list); nothing to import")
    return path, tasks


def _tables(path: Path, db: Any) -> dict[str, list[dict[str, Any]]]:
    if not isinstance(db, dict):
        raise CatalogError(path, "", "expected an object of tables")
    tables = {}
    for table, key in KEYS.items():
        rows = db.get(table)
        if not isinstance(rows, dict):
            raise CatalogError(path, table, "missing, or not an object of records by id")
        for record_id, record in rows.items():
            if not isinstance(record, dict) or record.get(key) != record_id:
                raise CatalogError(
                    path, f"{table}.{record_id}", f"record without {key} {record_id!r}"
                )
        tables[table] = list(rows.values())
    for table, (_, rows) in OWN_TABLES.items():
        tables[table] = rows
    return tables


# ---------------------------------------------------------------------- tasks -> scenarios
_SECOND_PERSON = [
    (r"\byou are\b", "I am"), (r"\byou're\b", "I'm"), (r"\byou were\b", "I was"),
    (r"\byou've\b", "I've"), (r"\byou'd\b", "I'd"), (r"\byou'll\b", "I'll"),
    (r"\byourself\b", "myself"), (r"\byours\b", "mine"), (r"\byour\b", "my"),
]  # fmt: skip
_OBJECT_YOU = re.compile(
    r"\b(to|for|with|of|than|ask|asks|tell|tells|give|gives|help|helps|let|lets|offer|offers|"
    r"remind|reminds|send|sends|call|calls|contact|contacts|about|from|by|at)\s+you\b",
    re.IGNORECASE,
)


def first_person(text: str) -> str:
    """A τ²-bench instruction ("You want ... your order") as the user says it ("I want ...")."""

    def keep_case(pattern: str, repl: str, text: str) -> str:
        def sub(match: re.Match[str]) -> str:
            first = match.group(0)[0]
            return repl[0].upper() + repl[1:] if first.isupper() else repl[0].lower() + repl[1:]

        return re.sub(pattern, sub, text, flags=re.IGNORECASE)

    for pattern, repl in _SECOND_PERSON:
        text = keep_case(pattern, repl, text)
    text = _OBJECT_YOU.sub(lambda m: f"{m.group(1)} me", text)
    text = re.sub(r"\bYou\b", "I", text)
    text = re.sub(r"\byou\b", "I", text)
    return re.sub(r"\bi\b", "I", text)


def _brief(instructions: dict[str, Any]) -> str:
    parts = [
        ("Why you are contacting support", instructions.get("reason_for_call")),
        ("What you know", instructions.get("known_info")),
        ("What you do not know", instructions.get("unknown_info")),
        ("How you are", instructions.get("task_instructions")),
    ]
    return " ".join(f"{label}: {str(text).strip()}" for label, text in parts
                    if isinstance(text, str) and text.strip(" ."))  # fmt: skip


def _persona(task_id: str) -> str:
    """A shared persona for the scripted user's writing style, fixed per task id."""
    ids = sorted(
        p.id for p in load_personas().values() if not p.domains or "online_shopping" in p.domains
    )
    return ids[zlib.crc32(task_id.encode()) % len(ids)]


def _slot_name(tool: str, argument: str, value: Any, slots: dict[str, Any]) -> str:
    """The slot an argument's value fills: an address change's fields are ``new_<field>``
    (not the record's keys), and a second value of a slot is ``<slot>_2``, ``_3``, ..."""
    is_key = argument in KEYS.values() or argument == "order_id"
    base = f"new_{argument}" if "address" in tool and not is_key else argument
    name, n = base, 1
    while name in slots and canonical_json(slots[name]) != canonical_json(value):
        n += 1
        name = f"{base}_{n}"
    return name


def _dumped(scenario: Scenario) -> dict[str, Any]:
    """The scenario as written to ``scenarios.yaml``: defaults left out, except a behavior's
    ``kind`` (a default of its class, but the tag that says which class it is)."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    if scenario.behaviors:
        data["behaviors"] = [
            b.model_dump(mode="json", exclude_none=True) for b in scenario.behaviors
        ]
    return data


def _action_count(task: Any) -> int:
    """How many gold actions a task lists (0 where it is malformed: `_scenario` says why)."""
    criteria = task.get("evaluation_criteria") if isinstance(task, dict) else None
    actions = criteria.get("actions") if isinstance(criteria, dict) else None
    return len(actions) if isinstance(actions, list) else 0


def _scenario(
    pack: Domain, path: Path, task: dict[str, Any], scenario_id: str
) -> tuple[Scenario, list[str]]:
    """The scenario of one task and its gold replay."""
    task_id = str(task.get("id"))
    where = f"task {task_id!r}"

    def fail(field_name: str, reason: str) -> CatalogError:
        return CatalogError(path, f"{where}: {field_name}", reason)

    criteria = task.get("evaluation_criteria")
    scenario_block = task.get("user_scenario")
    if not isinstance(criteria, dict) or not isinstance(criteria.get("actions"), list):
        raise fail("evaluation_criteria.actions", "missing or not a list")
    instructions = (
        (scenario_block or {}).get("instructions") if isinstance(scenario_block, dict) else None
    )
    if isinstance(instructions, str):
        instructions = {"reason_for_call": instructions}
    if not isinstance(instructions, dict):
        raise fail("user_scenario.instructions", "missing or not an object")
    gold = []
    for index, action in enumerate(criteria["actions"]):
        if not isinstance(action, dict) or not isinstance(action.get("arguments", {}), dict):
            raise fail(f"evaluation_criteria.actions[{index}]", "expected {name, arguments}")
        name = action.get("name")
        if name not in pack.tools:
            raise fail(f"evaluation_criteria.actions[{index}].name", f"unknown tool {name!r}")
        errors = pack.tools[name].argument_errors(action.get("arguments", {}))
        if errors:
            raise fail(f"evaluation_criteria.actions[{index}].arguments", errors[0])
        gold.append({"name": name, "arguments": action.get("arguments", {})})
    must_say = criteria.get("communicate_info") or []
    if not isinstance(must_say, list) or not all(
        isinstance(x, (str, int, float)) for x in must_say
    ):
        raise fail("evaluation_criteria.communicate_info", "expected a list of strings")
    reason = instructions.get("reason_for_call")
    objective = first_person(str(reason).strip()) if isinstance(reason, str) and reason.strip() \
        else "I need help with my orders."  # fmt: skip
    told = [str(x) for x in must_say]
    kind = {"complexity": "normal"}
    if not gold and not told:  # τ² rewards changing nothing: the request is declined
        kind = {"complexity": "impossible", "impossible": True,
                "fallback_behavior": NO_ACTION_FALLBACK}  # fmt: skip
    draft = Scenario(
        id=scenario_id, domain=pack.name, objective=objective, persona=_persona(task_id),
        success_criteria=["The final database equals the gold actions' (τ²-bench's DB check)."],
        gold_workflow=gold, must_say=told, **kind,
    )  # fmt: skip
    known = " ".join(str(instructions.get(k) or "") for k in ("known_info", "reason_for_call"))
    replay = _replay(pack, draft, known)
    data = draft.model_dump()
    data.update(
        gold_workflow=replay.workflow,
        hard_constraints=replay.slots,
        success_criteria=[*draft.success_criteria, *(f"The user is told {x}." for x in told)],
        must_say=told,
        user_brief=_brief(instructions) or None,
    )
    return Scenario.model_validate(data), replay


PUBLIC = ("get_product_details", "get_item_details", "list_all_product_types", "calculate")
"""Tools that need no authenticated customer."""
AUTHENTICATE = ("find_user_id_by_email", "find_user_id_by_name_zip")


@dataclass
class Replay:
    """A task's gold actions as a workflow the tools accept, and what had to change."""

    workflow: list[dict[str, Any]]
    slots: dict[str, Any]
    authentication_added: bool = False
    dropped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _owner(pack: Domain, gold: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The customer whose records the gold actions touch (by order id or user id)."""
    db = pack.database()
    for step in gold:
        arguments = step["arguments"]
        try:
            if "user_id" in arguments:
                return db.get("users", arguments["user_id"])
            if "order_id" in arguments:
                return db.get("users", db.get("orders", arguments["order_id"])["user_id"])
        except ToolError:
            continue
    return None


def _authentication(pack: Domain, gold: list[dict[str, Any]], known: str) -> dict[str, Any] | None:
    """The look-up a policy-following agent makes first, when the gold actions skip it.

    τ²-bench's tasks often list only the actions that change the database; its tools leave
    authentication to the agent, ours enforce it, so the workflow gets the look-up the user's
    known details allow: by email when the instructions quote it, else by name and zip.
    """
    first_private = next((i for i, g in enumerate(gold) if g["name"] not in PUBLIC), None)
    if first_private is None or any(g["name"] in AUTHENTICATE for g in gold[: first_private + 1]):
        return None
    user = _owner(pack, gold)
    if user is None:
        return None
    if user["email"].casefold() in known.casefold():
        return {"name": "find_user_id_by_email", "arguments": {"email": user["email"]}}
    name = user["name"]
    arguments = {"first_name": name["first_name"], "last_name": name["last_name"],
                 "zip": user["address"]["zip"]}  # fmt: skip
    return {"name": "find_user_id_by_name_zip", "arguments": arguments}


def _replay(pack: Domain, draft: Scenario, known: str) -> Replay:
    """Replay the gold actions on a fresh database and make them a workflow.

    A look-up that fails (a wrong email or order id the user first gives) changes nothing
    and is dropped; a write that fails stays (a rule refuses it: part of the task). Argument
    values no earlier kept call returned are the user's slots.
    """
    gold = [g.model_dump() for g in draft.gold_workflow]
    authentication = _authentication(pack, gold, known)
    replay = Replay([], {}, authentication_added=authentication is not None)
    backend = ToolBackend(draft, domain=pack)
    seen = ""
    for index, step in enumerate(([authentication] if authentication else []) + gold):
        call = ToolCall(id=f"gold_{index}", name=step["name"], arguments=step["arguments"])
        result = backend.execute(call)
        label = f"{step['name']}({canonical_json(step['arguments'])})"
        if not result.ok and pack.tools[step["name"]].kind == "read":
            replay.dropped.append(f"{label}: {result.content.get('message')}")
            continue
        if not result.ok:
            replay.errors.append(f"{label}: {result.content.get('message')}")
        for argument, value in step["arguments"].items():
            if argument in COMPOSED or value in ("", [], None) or value_in(value, seen):
                continue
            replay.slots[_slot_name(step["name"], argument, value, replay.slots)] = value
        replay.workflow.append(step)
        if result.ok:
            seen += " " + normalise(canonical_json(result.content), numbers="canonical")
    return replay


def _adverse(scenario: Scenario, pack: Domain, seed: int) -> Scenario:
    """An ``unhappy`` variant: one conversational and one execution adversity, seeded."""
    rng = random.Random(f"{seed}:{scenario.id}")
    behaviors: list[dict[str, Any]] = []
    withheld = [s for s in scenario.hard_constraints if s not in ("first_name", "last_name")]
    if withheld and rng.random() < 0.5:
        behaviors.append({"kind": "partial_information", "withheld": [rng.choice(withheld)]})
    else:
        behaviors.append(
            {"kind": "adversarial_tone", "intensity": rng.choice(["mild", "moderate"])}
        )
    writes = [g.name for g in scenario.gold_workflow if pack.tools[g.name].kind == "write"]
    reads = [g.name for g in scenario.gold_workflow if pack.tools[g.name].kind == "read"]
    if writes and rng.random() < 0.5:
        behaviors.append({"kind": "timeout", "tool": writes[0], "on_calls": [1]})
    elif reads:
        behaviors.append({"kind": "backend_failure", "tool": rng.choice(reads), "on_calls": [1]})
    data = scenario.model_dump()
    complexity = "impossible" if scenario.impossible else "unhappy"
    data.update(id=f"{scenario.id}-unhappy", complexity=complexity, behaviors=behaviors)
    return Scenario.model_validate(data)


# ---------------------------------------------------------------------- writing the pack
def _manifest(domain: str, policy: str, longest: int) -> dict[str, Any]:
    """The manifest; ``longest`` is the most gold actions of a task: a policy may look them all
    up before it speaks, plus the authentication look-up and a retry."""
    return {
        "name": f"tau2_{domain}",
        "title": f"{domain.capitalize()} (τ²-bench)",
        "description": f"Customer service for the τ²-bench {domain} store: authenticate the "
        "customer, look up profiles, orders and products, and change orders as the policy allows.",
        "today": TODAY,
        "keys": {**KEYS, **{t: key for t, (key, _) in OWN_TABLES.items()}},
        "handlers": f"{HANDLERS[domain]}.handlers",
        "policy": policy,
        "max_steps_per_turn": longest + 2,
    }


def _card(report: Tau2Import, folder: Path) -> str:
    counts = "\n".join(f"| `{tool}` | {n} |" for tool, n in report.tool_calls.items())

    def listed(found: dict[str, list[str]]) -> str:
        return "\n".join(f"- task {t}: {'; '.join(e)}" for t, e in found.items()) or "- none"

    domain = report.name.removeprefix("tau2_")
    added = ", ".join(report.authentication_added) or "none"
    return f"""# {report.name}: τ²-bench {domain} as a MADS domain pack

Written by `mads-bench import-tau2` from `{folder}` ({report.split} split, {report.tasks} tasks,
{report.scenarios} scenarios). Data: {SOURCE}; the database, policy and tasks are τ²-bench's;
the tools' code is mads-bench's own (`{HANDLERS[domain]}`), written from the policy.

Load it with `--domain-dir` on `simulate`, `validate`, `build-dataset`, `eval l1/l2` and
`eval online`; success is τ²-bench's database check plus its `communicate_info` strings.

| gold tool | calls |
| --- | --- |
{counts}

Tasks whose gold actions skip authentication, given the look-up first (our tools enforce it):
{added}.

Gold look-ups that fail on a fresh database (a wrong detail the user first gives), dropped:
{listed(report.dropped_lookups)}

Gold writes a rule refuses on a fresh database (kept: the refusal is part of the task):
{listed(report.refused_writes)}
"""


def import_tau2(
    tau2_dir: Path, out: Path, *, domain: str = "retail", split: str = "train",
    adversities: bool = False, seed: int = 0,
) -> Tau2Import:  # fmt: skip
    """Write the pack of a τ²-bench domain to ``out`` (replacing an earlier import there).

    Args:
        tau2_dir (`Path`): a τ²-bench domain folder, or a τ²-bench checkout.
        out (`Path`): the pack folder; must not exist, be empty or hold an earlier import.
        domain (`str`): the τ²-bench domain (``retail``).
        split (`str`): the task split (``train``; ``all`` for every task of ``tasks.json``).
        adversities (`bool`): also write an ``unhappy`` variant of each task.
        seed (`int`): seed of the adversity choice.

    Returns:
        `Tau2Import`: counts, per-tool gold calls, and gold actions that err.

    Raises:
        `UsageError`: an unknown domain, a missing folder or split, or an ``out`` in use.
        `CatalogError`: a malformed database or task, naming the file and the task id.
    """
    if domain not in HANDLERS:
        raise UsageError(f"--domain {domain}: no tools for it (known: {sorted(HANDLERS)})")
    folder = _source_folder(Path(tau2_dir), domain)
    out = Path(out)
    if out.resolve() == folder.resolve() or folder.resolve() in out.resolve().parents:
        raise UsageError(f"--out {out}: inside the τ²-bench folder {folder}; choose another")
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "import.json").is_file())
    ):
        raise UsageError(f"--out {out}: exists and is not an earlier import; choose another")
    tasks_path, tasks = _read_tasks(folder, split)
    tables = _tables(folder / "db.json", _read_json(folder / "db.json"))
    try:
        policy = (folder / "policy.md").read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogError(folder / "policy.md", "", f"cannot read file ({err.strerror})") from None
    name = f"tau2_{domain}"
    longest = max((_action_count(t) for t in tasks), default=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent)) / name
    try:
        staging.mkdir()
        tools = resources.files(HANDLERS[domain]).joinpath("tools.yaml").read_text(encoding="utf-8")
        (staging / "tools.yaml").write_text(tools, encoding="utf-8")
        (staging / "domain.yaml").write_text(
            yaml.safe_dump(
                _manifest(domain, policy, longest), sort_keys=False, allow_unicode=True, width=100
            ),
            encoding="utf-8",
        )
        (staging / "seed.json").write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
        (staging / "scenarios.yaml").write_text("[]\n", encoding="utf-8")
        pack = load_pack(staging)
        scenarios, report = [], Tau2Import(str(out), name, split, len(tasks), 0)
        seen_ids: set[str] = set()
        calls: Counter[str] = Counter()
        slot_counts: Counter[str] = Counter()
        for task in tasks:
            if not isinstance(task, dict) or not isinstance(task.get("id"), (str, int)):
                raise CatalogError(tasks_path, "", "a task without an id")
            task_id = str(task["id"])
            scenario_id = f"tau2-{domain}-{re.sub(r'[^a-z0-9_-]+', '-', task_id.casefold())}"
            if scenario_id in seen_ids:
                raise CatalogError(tasks_path, f"task {task_id!r}", "duplicate task id")
            seen_ids.add(scenario_id)
            scenario, replay = _scenario(pack, tasks_path, task, scenario_id)
            scenarios.append(scenario)
            if adversities:
                scenarios.append(_adverse(scenario, pack, seed))
            if replay.authentication_added:
                report.authentication_added.append(task_id)
            if replay.dropped:
                report.dropped_lookups[task_id] = replay.dropped
            if replay.errors:
                report.refused_writes[task_id] = replay.errors
            calls.update(g.name for g in scenario.gold_workflow)
            slot_counts.update(re.sub(r"_\d+$", "", s) for s in scenario.hard_constraints)
        report.scenarios = len(scenarios)
        report.tool_calls, report.slots = (
            dict(sorted(calls.items())),
            dict(sorted(slot_counts.items())),
        )
        dumped = [_dumped(s) for s in scenarios]
        (staging / "scenarios.yaml").write_text(
            yaml.safe_dump(dumped, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
        )
        load_pack(staging)  # every scenario cross-checked before the pack is put in place
        atomic_write_text(staging / "import.json", json.dumps(report.to_json(), indent=2) + "\n")
        atomic_write_text(staging / "README.md", _card(report, folder))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging.parent, ignore_errors=True)
    return report
