"""The build item types of the ``items`` suite: shell commands and agent builds.

``command_task``, ``agent_build_task`` and ``agent_build_sequence`` register through the
``mnemometer.item_types`` entry-point group like any plug-in's. Their commands run in
:mod:`mnemometer.sandbox`; each run is scored by :mod:`mnemometer.scoring.tasks`.
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

__all__ = [
    "AGENT_BUILD_SEQUENCE",
    "AGENT_BUILD_TASK",
    "COMMAND_TASK",
    "AgentBuildSequence",
    "AgentBuildTask",
    "BuildStep",
    "CommandTask",
    "RequiredContent",
]
