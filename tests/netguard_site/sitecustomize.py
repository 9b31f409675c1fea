"""Install the network guard in every Python process the test session starts.

The session puts this directory on ``PYTHONPATH`` and names the guard's module in
``NETGUARD_MODULE``; a process started without those runs unguarded, as a user's would.
"""

import os

if os.environ.get("NETGUARD_MODULE") and os.environ.get("NETGUARD_LOG"):
    import importlib.util

    _spec = importlib.util.spec_from_file_location("netguard", os.environ["NETGUARD_MODULE"])
    if _spec is not None and _spec.loader is not None:
        _netguard = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_netguard)
        _netguard.install()
