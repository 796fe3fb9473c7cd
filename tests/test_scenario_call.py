"""A scenario takes its case's arguments by name; the older `(modules, args)` form is still called as it was."""

from __future__ import annotations

import pytest

from lmgrade import Case, Check, asked_beside, takes_args_whole
from lmgrade.core.errors import HarnessFault
from lmgrade.core.scenario_arguments import binding_error, call_scenario, takes_args_by_name
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.reproduce import snippet


def by_name(modules, sentence, n, k=None):
    return {"sentence": sentence, "n": n, "k": k, "modules": modules}


def whole(modules, args):
    return {"args": args, "modules": modules}


def test_the_case_arguments_arrive_as_named_parameters_defaults_for_those_left_out():
    assert takes_args_by_name(by_name)
    assert call_scenario(by_name, "M", {"sentence": ["a"], "n": 2}) == {
        "sentence": ["a"],
        "n": 2,
        "k": None,
        "modules": "M",
    }
    assert call_scenario(by_name, "M", {"sentence": ["a"], "n": 2, "k": 0.5})["k"] == 0.5


def test_the_older_form_gets_the_arguments_whole_whatever_they_are():
    assert not takes_args_by_name(whole)
    assert call_scenario(whole, "M", [1, 2]) == {"args": [1, 2], "modules": "M"}
    assert call_scenario(whole, "M", {"n": 2}) == {"args": {"n": 2}, "modules": "M"}


def test_a_marked_scenario_gets_the_arguments_whole_under_any_parameter_name():
    @takes_args_whole
    def passes_on(modules, case):
        return case

    assert call_scenario(passes_on, None, {"x": 1}) == {"x": 1}


def test_a_case_of_no_arguments_calls_the_scenario_with_the_modules_alone():
    def imports_only(modules):
        return sorted(modules)

    assert call_scenario(imports_only, {"b": 1, "a": 2}, None) == ["a", "b"]


def test_arguments_that_are_not_a_dict_of_names_are_refused_with_the_scenario_named():
    with pytest.raises(TypeError, match="by_name takes its case's arguments by name.*not list"):
        call_scenario(by_name, None, [1, 2])


def test_binding_errors_name_the_unknown_or_missing_argument():
    assert binding_error(by_name, {"sentence": [], "n": 1}) is None
    assert "unexpected keyword argument 'm'" in binding_error(by_name, {"sentence": [], "n": 1, "m": 3})
    assert "missing a required argument: 'n'" in binding_error(by_name, {"sentence": []})
    assert "dict of str keys" in binding_error(by_name, (1, 2))
    assert binding_error(whole, (1, 2)) is None


@asked_beside
def beside_scenario(modules, test, n=1):
    return {"total": sum(test) * n}


def test_asked_beside_gives_a_named_scenario_both_inputs_and_never_the_key_beside():
    args = {"test": [1, 2], "n": 2, "beside": {"test": [5]}}
    assert call_scenario(beside_scenario, None, args) == {"total": 6, "total beside": 10}
    assert call_scenario(beside_scenario, None, {"test": [1]}) == {"total": 1}
    assert binding_error(beside_scenario, args) is None
    assert "unexpected keyword argument 'x'" in binding_error(beside_scenario, {**args, "beside": {"x": 1}})


def test_a_case_that_does_not_fit_its_scenario_is_the_plugins_fault_before_any_child_runs():
    def cases(ctx):
        return [Case("fits", {"sentence": ["a"], "n": 1}), Case("one too many", {"sentence": ["a"], "n": 1, "q": 0})]

    check = Check("pad", "pad", by_name, cases, points=1)
    with pytest.raises(HarnessFault, match=r"check pad, case 2 \(one too many\): .*'q'"):
        draw_cases(check, "demo", {}, "secret")
    fits = Check("pad", "pad", by_name, lambda ctx: cases(ctx)[:1], points=1)
    assert [c.label for c in draw_cases(fits, "demo", {}, "secret")] == ["fits"]


def test_the_check_case_script_calls_the_scenario_in_its_own_form(tmp_path):
    named = Check("pad", "pad", by_name, lambda ctx: [], points=1, files=("ngram",))
    older = Check("pad", "pad", whole, lambda ctx: [], points=1, files=("ngram",))
    assert snippet(named, tmp_path / "args", {"sentence": [], "n": 1}).endswith("print(by_name(modules, **args))")
    assert snippet(older, tmp_path / "args", {"n": 1}).endswith("print(whole(modules, args))")


def older_named_otherwise(modules, case):
    return {"case": case}


def one_argument(modules, values):
    return {"values": values}


def one_optional(modules, k=0.5):
    return {"k": k}


def test_two_parameters_take_the_arguments_by_name_only_where_they_are_that_one_name():
    # The older form under another name than args: the case's dict whole, as before.
    assert call_scenario(older_named_otherwise, None, {"x": 1, "y": 2}) == {"case": {"x": 1, "y": 2}}
    assert call_scenario(older_named_otherwise, None, None) == {"case": None}
    assert binding_error(older_named_otherwise, {"x": 1}) is None
    # One argument by name.
    assert call_scenario(one_argument, None, {"values": [1.0]}) == {"values": [1.0]}
    assert "unexpected keyword argument 'other'" in binding_error(one_argument, {"values": [], "other": 1})
    # One optional argument, left out.
    assert call_scenario(one_optional, None, {}) == {"k": 0.5}
    assert call_scenario(one_optional, None, None) == {"k": 0.5}
