"""The app's routes. Three of them are marked for the agent; the others are the person's only."""

import sqlite3

from fastapi import APIRouter, Depends, HTTPException, Response

from agentsurface.fastapi import procedure

from .auth import User, current_user, sign_in
from .db import get_db
from .models import Deleted, Expense, ExpenseIn, Login

router = APIRouter()


@router.post("/login")
def login(body: Login, response: Response) -> dict[str, str]:
    session = sign_in(body.username, body.password)
    if session is None:
        raise HTTPException(401, "Wrong user name or password.")
    response.set_cookie("session", session, httponly=True, samesite="strict")
    return {"user": body.username}


@router.get("/expenses")
@procedure("domain:expenses.list", effect="server-query")
def list_expenses(user: User = Depends(current_user), db: sqlite3.Connection = Depends(get_db)) -> list[Expense]:
    """List the signed-in person's expenses."""
    rows = db.execute("SELECT id, amount, note FROM expenses WHERE owner = ? ORDER BY id", (user.name,))
    return [Expense(id=i, amount=a, note=n) for i, a, n in rows]


@router.post("/expenses", status_code=201)
@procedure("domain:expenses.add", effect="server-mutation")
def add_expense(
    body: ExpenseIn, user: User = Depends(current_user), db: sqlite3.Connection = Depends(get_db)
) -> Expense:
    """Record an expense for the signed-in person."""
    cursor = db.execute(
        "INSERT INTO expenses (owner, amount, note) VALUES (?, ?, ?)", (user.name, body.amount, body.note)
    )
    return Expense(id=int(cursor.lastrowid or 0), amount=body.amount, note=body.note)


@router.delete("/expenses/{expense_id}")
@procedure("domain:expenses.delete", effect="destructive", approval="confirm", permissions={"expenses.delete"})
def delete_expense(
    expense_id: int, user: User = Depends(current_user), db: sqlite3.Connection = Depends(get_db)
) -> Deleted:
    """Delete one of the signed-in person's expenses."""
    if not user.can_delete:
        raise HTTPException(403, "You may not delete expenses.")
    gone = db.execute("DELETE FROM expenses WHERE id = ? AND owner = ?", (expense_id, user.name)).rowcount
    if not gone:
        raise HTTPException(404, "No such expense.")
    return Deleted(deleted=expense_id)


@router.delete("/expenses")
def delete_all_expenses(user: User = Depends(current_user), db: sqlite3.Connection = Depends(get_db)) -> Deleted:
    """Not marked: the person's own button only; no agent is ever offered it."""
    gone = db.execute("DELETE FROM expenses WHERE owner = ?", (user.name,)).rowcount
    return Deleted(deleted=gone)
