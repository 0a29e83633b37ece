"""Battery, client configuration files: mcp-install and mcp-uninstall on files generated from
the formats' grammars make a correct edit or report ``failed`` with the file byte-identical.

The generators and the editor-independent oracle live in ``capability_graph_testing.client_files``
(the stress session runs them for longer).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from capability_graph_testing.battery import battery_settings
from capability_graph_testing.client_files import (
    check_damaged_json_case,
    check_json_case,
    check_toml_case,
    client_toml,
    damaged_json,
    json_case,
    write_served_graph,
)


@pytest.fixture(scope="module")
def graph_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_served_graph(tmp_path_factory.mktemp("graph"))


@battery_settings(60)
@given(data=st.data())
def test_json_client_files_from_the_grammar(
    tmp_path_factory: pytest.TempPathFactory, graph_config: Path, data: st.DataObject
) -> None:
    text = data.draw(json_case("cursor", graph_config))
    event(check_json_case(tmp_path_factory.mktemp("json"), graph_config, "cursor", text))


@battery_settings(60)
@given(data=st.data())
def test_jsonc_client_files_from_the_grammar(
    tmp_path_factory: pytest.TempPathFactory, graph_config: Path, data: st.DataObject
) -> None:
    text = data.draw(json_case("vscode", graph_config))
    event(check_json_case(tmp_path_factory.mktemp("jsonc"), graph_config, "vscode", text))


@battery_settings(60)
@given(data=st.data())
def test_damaged_json_client_files(
    tmp_path_factory: pytest.TempPathFactory, graph_config: Path, data: st.DataObject
) -> None:
    raw = data.draw(damaged_json(graph_config))
    event(check_damaged_json_case(tmp_path_factory.mktemp("damaged"), graph_config, raw))


@battery_settings(80)
@given(data=st.data())
def test_toml_client_files_from_the_grammar(
    tmp_path_factory: pytest.TempPathFactory, graph_config: Path, data: st.DataObject
) -> None:
    text = data.draw(client_toml(graph_config))
    event(check_toml_case(tmp_path_factory.mktemp("toml"), graph_config, text))
