"""The dashboard tests' users and clients, shared with the hostile-content tests."""

from tests.dashboard.conftest import (  # noqa: F401 — fixtures, used by name
    dashboard_dirs,
    operator,
    operator_client,
    viewer,
    viewer_client,
)
