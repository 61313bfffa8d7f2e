"""The app: its routes, the agent's procedures mounted beside them, and the page's files.

    EXPENSES_SITE=site uvicorn --factory expenses.main:create_app
"""

import os

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from agentsurface.fastapi import AgentProcedures
from agentsurface.server import Caller, open_store

from .auth import User, current_user
from .db import create_tables, database_path
from .routes import router


def agent_caller(user: User = Depends(current_user)) -> Caller:
    """Who the agent acts for: the person signed in, with what they may do."""
    return Caller(id=user.name, permissions=frozenset({"expenses.delete"} if user.can_delete else ()))


def create_app() -> FastAPI:
    app = FastAPI(title="Expenses")
    app.include_router(router)
    create_tables(database_path())
    store = open_store(os.environ.get("EXPENSES_AGENT_STORE", "sqlite:///agent.sqlite3"))
    # After the routes: it serves the ones marked with @procedure, through the procedure pipeline.
    app.mount("/api/agent", AgentProcedures(app, caller=agent_caller, store=store))
    site = os.environ.get("EXPENSES_SITE")
    if site:  # the folder `agentsurface bundle` wrote: the page, its script and the runtime
        app.mount("/", StaticFiles(directory=site, html=True))
    return app
