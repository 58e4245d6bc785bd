"""Malformed files fail with the file, the field path and the reason."""

import pytest

from mads_bench.data_model import Persona, Scenario, ToolSpec
from mads_bench.loading import CatalogError, load_models


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_scenario_field_path(tmp_path):
    # the second scenario misspells a behavior field: path names index, list and field
    path = write(
        tmp_path,
        "s.yaml",
        """
- {id: a, domain: mock, objective: o, persona: p, success_criteria: [c], complexity: normal,
   gold_workflow: [{name: get_item, arguments: {item_id: I1}}]}
- id: b
  domain: mock
  objective: o
  persona: p
  hard_constraints: {order_id: O1}
  success_criteria: [c]
  complexity: unhappy
  behaviors:
    - {kind: partial_information, witheld: [order_id]}
""",
    )
    with pytest.raises(CatalogError) as err:
        load_models(path, Scenario)
    assert err.value.path == path
    assert err.value.field.startswith("[1].behaviors[0]")
    assert str(path) in str(err.value)


def test_tool_and_persona_errors(tmp_path):
    # a tool without a kind
    path = write(
        tmp_path, "t.yaml", "- {name: t, description: d, parameters: {type: object}, returns: {}}"
    )
    with pytest.raises(CatalogError, match=r"\[0\]\.kind: Field required"):
        load_models(path, ToolSpec)
    # a persona with a string age
    path = write(
        tmp_path,
        "p.yaml",
        """
- {id: x, name: X, age: old, hometown: h, occupation: o, background: b, writing_style: w,
   sample_messages: [a, b]}
""",
    )
    with pytest.raises(CatalogError, match=r"\[0\]\.age"):
        load_models(path, Persona)


def test_syntax_errors_name_the_line(tmp_path):
    # YAML and JSONL syntax errors carry the line
    path = write(tmp_path, "bad.yaml", "- id: a\n  objective: [unclosed\n")
    with pytest.raises(CatalogError, match="line"):
        load_models(path, Scenario)
    path = write(tmp_path, "bad.jsonl", '{"id": "a"}\n{"id": \n')
    with pytest.raises(CatalogError, match="line 2"):
        load_models(path, Scenario)
    # not a list at all
    path = write(tmp_path, "dict.yaml", "id: a\n")
    with pytest.raises(CatalogError, match="expected a list"):
        load_models(path, Scenario)
    with pytest.raises(CatalogError, match="cannot read"):
        load_models(tmp_path / "missing.yaml", Scenario)


def test_one_reader_for_json_arrays_and_jsonl(tmp_path):
    from mads_bench.loading import iter_json_records, load_json_or_jsonl

    # JSONL: a bad line is one error record, the next line still reads
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"a": 1}\n{oops\n\n[2]\n')
    found = [(r.line, r.index, r.value, r.error) for r in iter_json_records(jsonl)]
    assert found[0] == (1, 0, {"a": 1}, None) and found[2] == (4, 2, [2], None)
    assert found[1][:2] == (2, 1) and found[1][3].startswith("Expecting property name")
    # an array under any name (it starts with "["); a byte-order mark is dropped
    array = tmp_path / "d.txt"
    array.write_text('\ufeff[{"a": 1},\n {"b": 2}] trailing')
    records = list(iter_json_records(array))
    assert [r.value for r in records[:2]] == [{"a": 1}, {"b": 2}]
    assert (records[2].line, records[2].column, records[2].error) == (2, 12, "Extra data")
    assert records[2].rest_skipped
    # the strict form raises the first problem, where it is
    with pytest.raises(CatalogError, match=r"line 2 column 2: Expecting property name"):
        load_json_or_jsonl(jsonl)
    # JSONL saved as .json: the hint says how to name it
    lines = tmp_path / "lines.json"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    with pytest.raises(CatalogError, match=r"line 2 column 1: Extra data \(a \.json file"):
        load_json_or_jsonl(lines)
    # a blank file holds no records
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    assert load_json_or_jsonl(empty) == [] and list(iter_json_records(empty)) == []
