"""A second URLconf: the example project's patterns, the test views (one namespaced include)
and an AgentViews over all of them at /agent/ (tests switch ROOT_URLCONF to this module)."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from expenses_site import urls as example

from agentsurface.django import AgentViews
from agentsurface.server import ServerLimits, open_store

from . import views_for_tests as v

things: Any = (
    [
        path("<str:name>/echo/", v.echo_thing, name="echo"),
        path("<str:name>/secret/", v.secret_thing, name="secret"),
        path("find/", v.find_thing, name="find"),
    ],
    "things",
)

urlpatterns: list[Any] = [
    *example.urlpatterns[:-1],  # the example's own views, without its agent endpoint
    path("things/", include(things)),
    path("write-then-refuse/", v.write_then_refuse),
    path("raise/", v.raising),
    path("async/", v.async_echo),
    path("guarded/", v.guarded),
    path("permitted/", v.permitted),
]

agent = AgentViews(
    urlpatterns,
    store=open_store("sqlite:///:memory:"),
    caller=v.hook_caller,
    limits=ServerLimits(max_body_bytes=4096),
    audit=v.audit_hook,
)
urlpatterns += [path("agent/", include(agent.urls))]
