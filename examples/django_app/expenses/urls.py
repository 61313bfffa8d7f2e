from django.urls import path

from . import views

app_name = "expenses"

urlpatterns = [
    path("", views.list_expenses, name="list"),
    path("add/", views.add_expense, name="add"),
    path("<int:expense_id>/delete/", views.delete_expense, name="delete"),
    path("clear/", views.clear_expenses, name="clear"),
]
