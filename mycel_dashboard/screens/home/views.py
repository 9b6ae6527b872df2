from django.http import HttpRequest, HttpResponse

from memory_core.stores.locations import StoreRole
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def home(request: HttpRequest) -> HttpResponse:
    source, reader = open_source()
    # Each file is opened read-only: a damaged, locked or foreign-layout file says so here, by name.
    files = reader.file_status()
    context = {"source": source, "files": files, "main_found": source.locations.path(StoreRole.MAIN).exists()}
    return render_screen(request, "home.html", None, context)
