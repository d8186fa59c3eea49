"""`--taskset.<option> value` pairs as `medhal score`/`rescore`/`reproduce` read them: the
same names `eval` takes, a dotted name set in a nested table (`--taskset.task.wrong_reward`).

WHY: an option `eval` accepts but `medhal score` refuses (or reads flat) would make a run
impossible to rescore with the options it was made with."""

from __future__ import annotations

import pytest

from medhal.kit.options import OptionError, parse_taskset_options


def test_values_are_json_when_they_parse_and_text_otherwise() -> None:
    args = ["--taskset.subset", "scifact", "--taskset.num-shots=2", "--taskset.binary_reward", "true"]
    assert parse_taskset_options(args) == {"subset": "scifact", "num_shots": 2, "binary_reward": True}


def test_a_dotted_option_sets_a_nested_table() -> None:
    args = ["--taskset.task.wrong_reward", "-0.25", "--taskset.task.invalid_reward=-0.5"]
    assert parse_taskset_options(args) == {"task": {"wrong_reward": -0.25, "invalid_reward": -0.5}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--taskset.task", "1", "--taskset.task.wrong_reward", "0"], "task is already set to a value"),
        (["--taskset.task..x", "0"], "an empty name between dots"),
        (["--taskset.task.", "0"], "an empty name between dots"),
        (["--taskset.subset"], "needs a value"),
        (["subset", "x"], "unexpected argument"),
    ],
)
def test_malformed_options_are_one_line(args: list[str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_taskset_options(args)


def test_the_nested_option_reaches_the_environment_config() -> None:
    from medhal.kit.options import taskset_config

    config = taskset_config("med-halt", parse_taskset_options(["--taskset.task.wrong_reward", "-0.25"]))
    assert config.task.wrong_reward == -0.25
    with pytest.raises(OptionError, match=r"option task\.wrong_reward"):
        taskset_config("med-halt", parse_taskset_options(["--taskset.task.wrong_reward", "0.5"]))
