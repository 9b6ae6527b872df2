from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from memory_core.stores.locations import StoreRole
from mycel_dashboard.sources import current_source


def home(request: HttpRequest) -> HttpResponse:
    source = current_source()
    files = [
        {"role": role.value, "path": path, "exists": path.exists()}
        for role, path in source.locations.databases().items()
    ]
    return TemplateResponse(
        request,
        "home.html",
        {"source": source, "files": files, "main_found": source.locations.path(StoreRole.MAIN).exists()},
    )
