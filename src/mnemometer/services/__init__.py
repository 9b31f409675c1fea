"""Real memory systems run as local services for tests and users (Letta on PostgreSQL).

``mnemometer serve letta`` starts one; stores and agents talk to it through
:mod:`mnemometer.services` so neither needs the other. See docs/systems.md.
"""

from mnemometer.services._letta_install import DEFAULT_VERSION, TESTED, LettaInstall
from mnemometer.services._letta_server import LettaStack, prepare
from mnemometer.services._postgres import Postgres

__all__ = ["DEFAULT_VERSION", "TESTED", "LettaInstall", "LettaStack", "Postgres", "prepare"]
