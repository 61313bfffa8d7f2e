"""An expense tracker: a FastAPI app (routes, session login, its own SQLite database) whose
list, add and delete routes an agent in the page may call through agentsurface."""
