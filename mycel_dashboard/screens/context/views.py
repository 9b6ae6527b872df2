"""Placeholder until the screens land (issue 15)."""

from django.http import Http404, HttpRequest, HttpResponse

from mycel_dashboard.screens.context.cache_views import cache_page as cache_page
from mycel_dashboard.screens.context.calibration_views import calibration_page as calibration_page


def tools_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")
