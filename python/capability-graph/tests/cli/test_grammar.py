"""The argument grammar of every command (CG-CLI-15 .. CG-CLI-19): integers, option-like tokens,
``--``, ``=`` values, no abbreviations, repeated options, help and version first, ``--config``
before the command, and argv that is not UTF-8 (see also ``test_hostile``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capability_graph_testing.surfaces import cli, usage_error

LIMIT_ERROR = "/limit must be at least 1"


def _list(config: Path, *argv: str) -> list[dict[str, object]]:
    done = cli("list", "--config", str(config), *argv)
    assert done.status == 0, done
    items: list[dict[str, object]] = done.json()["items"]
    return items


@pytest.mark.parametrize("text", ["1", "01", "0001"])
def test_an_integer_may_have_leading_zeros(config: Path, text: str) -> None:
    assert len(_list(config, "--limit", text)) == 1


@pytest.mark.parametrize("text", ["-0", "-000", "-1", "-007"])
def test_a_negative_or_zero_integer_reaches_the_graph(config: Path, text: str) -> None:
    done = cli("list", "--config", str(config), "--limit", text)
    assert done.status == 1
    assert done.envelope()["error"]["message"] == LIMIT_ERROR


@pytest.mark.parametrize("text", ["+1", " 1", "1 ", "1_0", "\u0665", "\uff11", "1e1", "0x1", ""])
def test_an_integer_is_an_optional_minus_and_ascii_digits_only(text: str) -> None:
    usage_error(cli("list", "--limit", text), "list", "argument --limit: must be an integer")


def test_an_integer_of_5000_digits_is_judged_by_the_graph_with_every_digit(config: Path) -> None:
    """Past the interpreter's own int() limit (4300 digits): the request text's rules apply."""
    for sign in ("", "-"):
        done = cli("list", "--config", str(config), "--limit", sign + "9" * 5000)
        assert done.status == 1, done
        message = done.envelope()["error"]["message"]
        assert message == "/limit integers must stay within +/-2^53"


def test_a_long_option_is_written_in_full() -> None:
    usage_error(
        cli("list", "--lim", "1"), "list", "an option is not recognized (did you mean --limit?)"
    )


def test_an_option_value_may_not_be_option_like_but_may_follow_an_equals_sign(
    config: Path,
) -> None:
    usage_error(
        cli("list", "--cursor", "--limit"), "list", "argument --cursor: expected one argument"
    )
    usage_error(cli("list", "--cursor", "--"), "list", "argument --cursor: expected one argument")
    done = cli("list", "--config", str(config), "--cursor=--limit")
    assert done.envelope()["error"]["code"] == "CG_INPUT_INVALID"  # not base64url: a value
    done = cli("list", "--config", str(config), "--limit", "-1")  # a - and a digit: a value
    assert done.envelope()["error"]["message"] == LIMIT_ERROR


def test_the_empty_token_is_a_value(config: Path) -> None:
    done = cli("list", "--config", str(config), "--cursor", "")
    assert done.envelope()["error"]["message"] == "/cursor must have at least 1 characters"


def test_a_switch_takes_no_value() -> None:
    usage_error(cli("read", "a::b", "c", "--raw=yes"), "read", "argument --raw: takes no value")


def test_double_dash_ends_the_options_and_options_interleave(config: Path) -> None:
    done = cli("resolve", "--depth", "0", "--config", str(config), "--", "acme::a")
    assert done.status == 0, done
    usage_error(cli("list", "--", "-x"), "list", "1 unrecognized argument")
    usage_error(cli("match", "-x y"), "match", "an option is not recognized")


def test_a_double_dash_after_the_separator_is_an_argument(config: Path) -> None:
    usage_error(
        cli("explain", "CG_INPUT_INVALID", "--", "--"), "explain", "1 unrecognized argument"
    )
    usage_error(cli("read", "a", "b", "--", "--"), "read", "1 unrecognized argument")
    done = cli("resolve", "--config", str(config), "--", "--")
    assert done.status == 1, done
    assert '"message":"/ids/0 does not have the required format' in done.stderr


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["list", "--limit", "1", "--limit=2"], "--limit"),
        (["read", "a::b", "c", "--raw", "--raw"], "--raw"),
        (["--config", "a.json", "list", "--config", "b.json"], "--config"),
        (["doctor", "--json", "--json"], "--json"),
    ],
)
def test_an_option_given_twice_is_a_usage_error(argv: list[str], option: str) -> None:
    usage_error(
        cli(*argv),
        argv[0] if argv[0] != "--config" else "list",
        f"argument {option}: may be given once",
    )


def test_a_repeatable_option_collects_every_value(config: Path) -> None:
    assert _list(config, "--provider", "acme")
    # The second value is in the request too: a provider outside the scope is refused.
    done = cli("list", "--config", str(config), "--provider", "acme", "--provider=nobody")
    assert done.envelope()["error"]["code"] == "CG_ACCESS_DENIED"


def test_config_before_the_command_is_the_commands_own(config: Path) -> None:
    done = cli("--config", str(config), "list", "--limit", "1")
    assert done.status == 0, done
    assert len(done.json()["items"]) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--bogus", "--help"],
        ["list", "--limit", "x", "-h"],
        ["list", "--limit", "1", "--limit", "2", "--help"],
        ["read", "--help"],
        ["mcp-install", "--client", "nope", "--help"],
    ],
)
def test_help_wins_over_every_usage_error_of_the_command(argv: list[str]) -> None:
    done = cli(*argv)
    assert (done.status, done.stderr) == (0, ""), done
    assert done.stdout.startswith(f"usage: capability-graph {argv[0]}")


def test_before_the_command_the_first_of_help_and_version_acts() -> None:
    done = cli("--bogus", "--version", "--help")
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.startswith("capability-graph ")
    done = cli("--help", "--version", "frob")
    assert (done.status, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: capability-graph")


def test_an_unknown_command_is_a_usage_error_even_with_help() -> None:
    done = cli("frob", "--help")
    assert (done.status, done.stdout) == (2, "")


def test_an_argument_that_is_not_utf8_is_a_usage_error_first() -> None:
    # argv bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape).
    done = cli("list", "--help", "caf\udce9")
    usage_error(done, "", "an argument is not UTF-8 text")


def test_a_valid_replacement_character_is_an_ordinary_argument(config: Path) -> None:
    done = cli("resolve", "--config", str(config), "\ufffd")
    assert done.envelope()["error"]["code"] == "CG_INPUT_INVALID"


@pytest.mark.parametrize(
    ("given", "code"),
    [("cg_input_invalid", "CG_INPUT_INVALID"), ("Cg_Config_Invalid", "CG_CONFIG_INVALID")],
)
def test_explain_folds_ascii_case_only(given: str, code: str) -> None:
    assert cli("explain", given, "--json").json()["code"] == code


@pytest.mark.parametrize(
    "given", ["cg_\u0131nput_invalid", " CG_INPUT_INVALID", "CG_INPUT_INVALID\n"]
)
def test_explain_folds_nothing_else_and_trims_nothing(given: str) -> None:
    done = cli("explain", given)
    assert (done.status, done.stdout) == (2, "")
    assert "unknown error code" in done.stderr


def test_explain_json_without_a_code_is_one_line_with_every_entry() -> None:
    entries = cli("explain", "--json").json()
    assert isinstance(entries, list)
    assert "CG_INPUT_INVALID" in [entry["code"] for entry in entries]


def test_call_without_arguments_sends_the_empty_request(config: Path) -> None:
    assert cli("call", "describe_graph", "--config", str(config)).status == 0
    assert cli("call", "list_capabilities", "--config", str(config)).json()["status"] == "ok"
