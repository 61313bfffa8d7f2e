from django.conf import settings
from django.urls import include, path, re_path
from django.views.static import serve
from expenses import views

from agentsurface.django import AgentViews, DjangoInvocationStore

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("expenses/", include("expenses.urls")),
    # The page's runtime and its Python files (a real deployment serves these as static files).
    re_path(r"^runtime/(?P<path>.*)$", serve, {"document_root": settings.AGENT_RUNTIME}),
    re_path(r"^expenses_page/(?P<path>[a-z_]+\.(?:py|json))$", serve, {"document_root": settings.PAGE_FILES}),
]

# The marked views as procedures, at /api/agent/ (after the patterns they are found in); each
# call's record in the project's database, in the same transaction as the view's writes.
agent = AgentViews(urlpatterns, store=DjangoInvocationStore())
urlpatterns += [path("api/agent/", include(agent.urls))]
