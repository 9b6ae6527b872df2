from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from memory_core.stores.locations import StoreRole
from mycel_dashboard.data import open_source


def home(request: HttpRequest) -> HttpResponse:
    source, reader = open_source()
    # Each file is opened read-only: a damaged, locked or foreign-layout file says so here, by name.
    files = reader.file_status()
    return TemplateResponse(
        request,
        "home.html",
        {"source": source, "files": files, "main_found": source.locations.path(StoreRole.MAIN).exists()},
    )
