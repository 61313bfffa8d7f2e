"""The expense tracker's views: plain JSON views on the ORM, written for the app's own page.

Three of them are also procedures for agents (the ``@procedure`` lines on top); the others,
like ``clear_expenses``, are not and cannot be reached as one.
"""

import json
from datetime import date

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from agentsurface.django import procedure

from . import agent
from .models import Expense


@ensure_csrf_cookie
@login_required
def home(request: HttpRequest):
    return render(request, "expenses/home.html")


@procedure("domain:expenses.list", effect="server-query", input=agent.MonthFilter, output=agent.ExpenseList)
@login_required
@require_GET
def list_expenses(request: HttpRequest) -> JsonResponse:
    """List the signed-in user's expenses, newest first, with their total."""
    expenses = Expense.objects.filter(owner=request.user)
    month = request.GET.get("month")
    if month:
        year, _, number = month.partition("-")
        expenses = expenses.filter(spent_on__year=int(year), spent_on__month=int(number))
    rows = [e.as_json() for e in expenses]
    return JsonResponse({"expenses": rows, "total_cents": sum(int(r["amount_cents"]) for r in rows)})


@procedure("domain:expenses.add", effect="server-mutation", input=agent.NewExpense, output=agent.Expense)
@login_required
@require_POST
def add_expense(request: HttpRequest) -> JsonResponse:
    """Record an expense for the signed-in user."""
    try:
        data = json.loads(request.body)
        amount = int(data["amount_cents"])
        description = str(data["description"]).strip()
        spent_on = date.fromisoformat(data["spent_on"])
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"error": "amount_cents, description and spent_on are required"}, status=400)
    if amount <= 0 or not description:
        return JsonResponse({"error": "the amount must be positive and the description not empty"}, status=400)
    if spent_on > date.today():
        return JsonResponse({"error": "an expense cannot be in the future"}, status=400)
    expense = Expense.objects.create(owner=request.user, amount_cents=amount, description=description, spent_on=spent_on)
    return JsonResponse(expense.as_json(), status=201)


@procedure(
    "domain:expenses.delete",
    effect="destructive",
    input=agent.ExpenseRef,
    output=agent.Deleted,
    approval="confirm",
)
@login_required
@require_POST
def delete_expense(request: HttpRequest, expense_id: int) -> JsonResponse:
    """Delete one of the signed-in user's expenses."""
    expense = get_object_or_404(Expense, pk=expense_id, owner=request.user)
    expense.delete()
    return JsonResponse({"deleted": expense_id})


@login_required
@require_POST
def clear_expenses(request: HttpRequest) -> JsonResponse:
    """Delete all of the user's expenses (the page's "start over" button; not for agents)."""
    count, _ = Expense.objects.filter(owner=request.user).delete()
    return JsonResponse({"deleted": count})
