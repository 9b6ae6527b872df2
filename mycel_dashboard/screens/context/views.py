"""The Context screens' views (issue 15), one module each."""

from mycel_dashboard.screens.context.cache.views import cache_page as cache_page
from mycel_dashboard.screens.context.calibration.views import calibration_page as calibration_page
from mycel_dashboard.screens.context.tools.views import tools_page as tools_page
