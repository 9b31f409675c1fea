from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import netguard
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SEED = SHARED / "seed-data"
MNEMOMETER = str(Path(sys.executable).with_name("mnemometer"))


def seed_file(*parts: str) -> Path:
    """A file from ../shared/seed-data (CI always has it beside the clone)."""
    path = SEED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"seed data not found at {path} (expected ../shared beside the repo)")
    return path


def kw_lex_experiment() -> Any:
    """keyword and bm25 as the conditions ``kw`` and ``lex``, two repeats each, on demo-en."""
    from mnemometer import Experiment, SystemSpec

    return Experiment(
        "retrieval",
        [SystemSpec.store("keyword", condition="kw"), SystemSpec.store("bm25", condition="lex")],
        repeats=2,
        dataset="demo-en",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Guard the whole session: no connection or DNS lookup off loopback (issue 20 §5).

    The guard covers every thread of this process and, through ``netguard_site`` on
    ``PYTHONPATH``, every Python process a test starts; each refused attempt is appended
    to one log, and the test that made it fails, as does the run.
    """
    del config
    log = Path(tempfile.mkdtemp(prefix="mnemometer-netguard-")) / "attempts.log"
    os.environ[netguard.LOG_VAR] = str(log)
    os.environ["NETGUARD_MODULE"] = str(Path(netguard.__file__).resolve())
    site = str(Path(__file__).with_name("netguard_site"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")]))
    netguard.install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Name the test in the environment before any fixture (a module's cluster) starts."""
    os.environ[netguard.TEST_VAR] = item.nodeid


@pytest.fixture(autouse=True)
def _loopback_only(request: pytest.FixtureRequest) -> Iterator[None]:
    log = os.environ[netguard.LOG_VAR]  # the session's, even if the test points it elsewhere
    yield
    mine = [
        line.split("\t", 2)[2]
        for line in netguard.read_log(log)
        if line.split("\t")[1] == request.node.nodeid and not netguard.known(line)
    ]
    if mine:
        pytest.fail(f"tried to leave the machine: {'; '.join(mine)}", pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Any attempt off loopback (even one no test was blamed for) fails the run."""
    attempts = netguard.read_log(os.environ.get(netguard.LOG_VAR, ""))
    if any(not netguard.known(line) for line in attempts):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def needs(*modules: str, extras: str) -> pytest.MarkDecorator:
    """Skip unless every module is installed, naming the extras that install them."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"needs the {extras} extra ({', '.join(missing)} missing)"
    )


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs default to ./runs; keep every test's output in its own temp directory.
    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("MNEMOMETER_"):
            monkeypatch.delenv(key)


class _Main:
    """Let CliRunner drive ``mnemometer.cli.main.main``, which maps errors to exit code 2."""

    name = "mnemometer"

    def main(self, args, prog_name=None, **_):
        from mnemometer.cli.main import main

        main(list(args))


def invoke_cli(*args):
    """Run the mnemometer CLI in-process, exactly as the console script does."""
    from click.testing import CliRunner

    return CliRunner().invoke(_Main(), [str(a) for a in args])


# The fast loop's slowest tests (issue 16), measured with `pytest --durations=40`: each took
# 8 s or more on a loaded 2-core machine, most of it loading torch, MiniLM or an embedded
# vector system. They run in the marked group (`make test-live`, which CI runs); a prefix
# covers every parametrization. Re-measure with `make test` (it prints --durations=15).
SLOW_TESTS = (
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[mem0",
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[qdrant",
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[lancedb",
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[dense",
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[hybrid",
    "tests/stores/test_ties.py::test_permuting_the_memories_changes_nothing[chroma",
    "tests/stores/test_ties.py::test_a_different_tie_seed_draws_a_different_order",
    "tests/stores/test_real_stores.py::test_cli_runs_retrieval_offline_leaving_home_untouched",
    "tests/stores/test_real_stores.py::test_conformance_in_a_run_directory",
    "tests/stores/test_real_stores.py::test_mem0_infer_true_extracts_through_the_llm_endpoint",
    "tests/stores/test_real_stores.py::test_mem0_infer_true_with_a_providers_model",
    "tests/stores/test_real_stores.py::test_qdrant_directory_locked_by_another_process",
    "tests/stores/test_real_stores.py::test_hybrid_lancedb_search_matches_words_vector_search_misses",
    "tests/report/test_report.py::test_a_suite_directory_run_reports_and_compares_after_the_suite_is_gone",
    "tests/report/test_report.py::test_one_registry_renders_every_kind_in_every_format",
    "tests/scoring/test_scenario_similarity.py::test_shipped_threshold_is_the_calibration",
    "tests/suites/test_build_tasks.py::test_example_suite_runs_and_compares_by_step",
    "tests/stores/test_rerank.py::test_dense_rerank_over_bm25",
    "tests/suites/test_retrieval_conversations.py::test_locomo_evidence_retrieval_is_isolated",
    "tests/stores/test_dense.py::test_conformance",
    "tests/runner/test_conditions.py::test_fusion_is_weighted_rrf_over_its_channels",
    "tests/runner/test_conditions.py::test_fusion_passes_the_store_conformance_kit",
    "tests/workflows/test_doctor_reproduce.py::test_the_three_documented_commands",
    "tests/runner/test_runner.py::test_resume_after_sigkill_equals_uninterrupted_run",
    "tests/agents/test_agent_mem0.py::test_mem0_recalls_across_sessions_isolated_per_scenario",
    "tests/workflows/test_sweep.py::test_running_a_sweep_again_finishes_only_what_is_missing",
    "tests/workflows/test_sweep.py::test_a_sweep_runs_the_matrix_and_ends_with_a_leaderboard",
    "tests/report/test_report.py::test_a_scenarios_run_reports_without_its_suite_or_extras",
    "tests/suites/test_memtest_suite.py::test_lossy_store_scores_exactly_what_it_kept",
    "tests/suites/test_memtest_suite.py::test_forgetting_store_is_measured_and_the_rest_sees_a_fresh",
    # Measured on a fresh machine's `make test` under load 8-13 (2026-11-28, issue 32 §1).
    "tests/reliability/test_fuzz_cli.py::test_40_mutations_of_the_100_memory_sample_through_run",
    "tests/reliability/test_faults.py::test_a_faulty_store_is_contained_and_reported",
    "tests/reliability/test_faults.py::test_a_faulty_agent_is_contained_and_reported",
    "tests/reliability/test_consent.py::test_a_resume_grants_what_the_suite_toml_asks_only_from_its",
    "tests/reliability/test_consent.py::test_a_suite_toml_cannot_widen_the_sandbox_for_itself",
    "tests/reliability/test_consent.py::test_a_resume_with_allow_shell_finishes_in_the_sandbox_it_gi",
    "tests/reliability/test_kill_resume.py::test_parallel_ingest_of_conversations_survives_sigkill",
    "tests/reliability/test_resume_edges.py::test_a_sequence_cut_between_its_steps_is_run_again",
    "tests/reliability/test_resume_edges.py::test_a_retried_failure_leaves_no_stale_error_behind",
    "tests/reliability/test_lock.py::test_a_second_writer_is_refused_naming_the_holder_and_a_dead_on",
)


# Tests that need an extra the fast loop does not install (Makefile TEST_EXTRAS: the fast
# group's venv has the embeddings, report and analysis extras; mem0, the vector engines,
# Letta's client, Graphiti, LangMem and LiteLLM are LIVE_EXTRAS). They are marked ``extras``
# and run with the live group (`make test-live`, which CI runs); `make test` passes
# --strict-installs, so a test that skips there for a missing module fails instead,
# naming this list.
EXTRA_TESTS = (
    "tests/agents/test_letta.py::",
    "tests/llm_/test_prices.py::test_prices_come_from_the_installed_map_with_its_hash",
    "tests/llm_/test_tokens.py::",
    "tests/reliability/test_secrets.py::test_a_mem0_key_lands_in_no_file",
    "tests/report/test_leaderboard_costs.py::test_a_figure_a_run_lacks_shows_a_dash_not_zero",
    "tests/report/test_leaderboard_costs.py::test_a_repeat_without_a_price_leaves_the_cell_without_dollars",
    "tests/report/test_leaderboard_costs.py::test_each_cell_carries_what_the_system_costs",
    "tests/report/test_leaderboard_costs.py::test_the_html_table_sorts_by_value_with_an_inline_script",
    "tests/runner/test_conditions.py::test_an_llm_in_the_run_settings_makes_graph_available",
    "tests/stores/test_mem0_remote.py::",
    "tests/stores/test_real_stores.py::test_mem0_bad_vector_store_option",
    "tests/stores/test_real_stores.py::test_mem0_batched_ingest_keeps_every_memory_and_ranks_as_one_by_one",
    "tests/stores/test_rerank.py::test_llm_verdicts_from_a_providers_model",
    "tests/suites/test_cost.py::test_a_new_judge_priced_from_another_map_than_the_parents_says_so",
    "tests/suites/test_cost.py::test_an_endpoint_that_under_reports_is_billed_what_was_counted",
    "tests/suites/test_cost.py::test_an_honest_endpoint_is_billed_as_it_reported",
    "tests/suites/test_cost.py::test_dollars_equal_billed_tokens_times_the_pinned_price_map",
    "tests/suites/test_cost.py::test_re_scoring_keeps_the_pinned_prices_and_prices_a_new_judge",
    "tests/suites/test_cost.py::test_the_reader_budget_counts_the_models_own_tokens",
    "tests/suites/test_memoryagentbench.py::test_parquet_as_the_hub_ships_it",
    "tests/test_llm_providers.py::test_a_bad_key_or_an_unknown_provider_is_one_line_and_exit_2",
    "tests/test_llm_providers.py::test_a_dead_provider_stops_the_run_with_75_and_a_resume_finishes_it",
    "tests/test_llm_providers.py::test_a_locomo_run_counts_the_same_tokens_through_either_protocol",
    "tests/test_llm_providers.py::test_an_abandoned_items_call_is_cancelled_not_an_llm_error",
    "tests/test_llm_providers.py::test_build_through_the_messages_api_makes_the_openai_paths_dataset",
    "tests/test_llm_providers.py::test_chat_json_by_output_format_or_a_forced_tool",
    "tests/test_llm_providers.py::test_chat_through_the_messages_api_counts_the_providers_tokens",
    "tests/test_llm_providers.py::test_errors_are_the_openai_paths",
    "tests/test_llm_providers.py::test_every_request_goes_through_our_http_layer",
    "tests/test_llm_providers.py::test_no_key_anywhere_is_one_line_before_anything_is_sent",
    "tests/test_llm_providers.py::test_openais_key_from_the_environment_is_never_sent_to_another_provider",
    "tests/test_llm_providers.py::test_retries_go_through_the_http_layer",
    "tests/test_llm_providers.py::test_the_cache_answers_a_second_time_and_keeps_no_key",
    "tests/test_llm_providers.py::test_the_openai_protocol_through_litellm_hosted_vllm",
    "tests/test_llm_providers.py::test_the_provider_names_are_litellms_own",
    "tests/test_llm_providers.py::test_the_rag_agent_answers_through_the_messages_api",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--strict-installs``: a skip for a module that is not installed fails the test."""
    parser.addoption(
        "--strict-installs",
        action="store_true",
        help="fail a test that skips because a module or extra is not installed "
        "(make test: the fast group's venv holds everything its tests need)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the measured slowest tests ``slow`` and those needing a live extra ``extras``."""
    del config
    for item in items:
        if item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith(EXTRA_TESTS):
            item.add_marker(pytest.mark.extras)


# What the skip helpers (importorskip, ``needs``, the extras' own checks) say when something
# is not installed.
_NOT_INSTALLED = re.compile(r"No module named|could not import|\bextra\b|mnemometer\[|optional dep")


def _missing_install(
    config: pytest.Config, report: pytest.CollectReport | pytest.TestReport
) -> bool:
    return (
        report.skipped
        and bool(config.getoption("--strict-installs"))
        and bool(_NOT_INSTALLED.search(str(report.longrepr)))
    )


def _fail_missing(report: pytest.CollectReport | pytest.TestReport) -> None:
    reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = (
        f"{report.nodeid} skipped for a missing install ({reason}), and make test selects it: "
        "add it to EXTRA_TESTS in tests/conftest.py (make test-live runs it with every extra)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under ``--strict-installs``, a selected test skipped for a missing module fails."""
    del call
    report = yield
    if _missing_install(item.config, report):
        _fail_missing(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """The same for a module skipped whole, unless every test in it is in EXTRA_TESTS."""
    report = yield
    mine = collector.nodeid + "::"
    if _missing_install(collector.config, report) and not mine.startswith(EXTRA_TESTS):
        _fail_missing(report)
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the fuzz campaign's tally (issue 20 §3) and what the network guard refused."""
    mutate = sys.modules.get("mutate")
    for line in mutate.TALLY.lines() if mutate is not None else []:
        terminalreporter.write_line(line)
    attempts = netguard.read_log(os.environ.get(netguard.LOG_VAR, ""))
    unknown = [line for line in attempts if not netguard.known(line)]
    terminalreporter.write_line(
        f"netguard: {len(attempts)} connection(s) or lookup(s) off loopback refused, "
        f"{len(attempts) - len(unknown)} of them known (Ray's cloud probe)"
        + "".join(f"\n  {line}" for line in unknown)
    )
