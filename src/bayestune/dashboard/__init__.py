"""``bayestune dashboard JOURNAL``: a live web page of a run, served locally and read only.

:mod:`~bayestune.dashboard.snapshot` reads the journal (never writing, never taking the run's
lock), :mod:`~bayestune.dashboard.server` serves it with the standard library, and
``page.html`` draws it in the browser (SVG, no script from elsewhere).
"""

from bayestune.dashboard.server import DashboardServer, serve
from bayestune.dashboard.snapshot import RunView

__all__ = ["DashboardServer", "RunView", "serve"]
