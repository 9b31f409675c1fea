"""Shell and agent build item types for the ``items`` suite, with their sandboxed executor.

``command_task``, ``agent_build_task`` and ``agent_build_sequence`` register through the ``mnemometer.item_types`` entry-point group like any plug-in.
"""

from mnemometer.suites.tasks._build import (
    AGENT_BUILD_SEQUENCE,
    AGENT_BUILD_TASK,
    COMMAND_TASK,
)
from mnemometer.suites.tasks._models import (
    AgentBuildSequence,
    AgentBuildTask,
    BuildStep,
    CommandTask,
    RequiredContent,
)
from mnemometer.suites.tasks._query import query_suite

__all__ = [
    "AGENT_BUILD_SEQUENCE",
    "AGENT_BUILD_TASK",
    "COMMAND_TASK",
    "AgentBuildSequence",
    "AgentBuildTask",
    "BuildStep",
    "CommandTask",
    "RequiredContent",
    "query_suite",
]
