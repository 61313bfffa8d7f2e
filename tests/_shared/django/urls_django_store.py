"""urls_for_tests.py's views served with the invocation store on Django's own database
(DjangoInvocationStore): the view's writes and the call's record in one transaction."""

from __future__ import annotations

from typing import Any

from django.urls import include, path

from agentsurface.django import AgentViews, DjangoInvocationStore
from agentsurface.server import ServerLimits

from . import urls_for_tests as base
from . import views_for_tests as v

urlpatterns: list[Any] = list(base.urlpatterns[:-1])  # without the other store's endpoint
agent = AgentViews(
    urlpatterns,
    store=DjangoInvocationStore(),
    caller=v.hook_caller,
    limits=ServerLimits(max_body_bytes=4096),
    audit=v.audit_hook,
)
urlpatterns += [path("agent/", include(agent.urls))]
