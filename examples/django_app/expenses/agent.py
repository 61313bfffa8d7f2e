"""What the agent sends to the expense views and gets back (the procedures' schemas)."""

from pydantic import BaseModel, Field

DATE = r"^\d{4}-\d{2}-\d{2}$"


class MonthFilter(BaseModel):
    month: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}$", description="YYYY-MM; all months if omitted")


class Expense(BaseModel):
    id: int
    amount_cents: int
    description: str
    spent_on: str = Field(pattern=DATE)


class ExpenseList(BaseModel):
    expenses: list[Expense]
    total_cents: int


class NewExpense(BaseModel):
    amount_cents: int = Field(gt=0, le=10_000_000, description="the amount in cents")
    description: str = Field(min_length=1, max_length=200)
    spent_on: str = Field(pattern=DATE, description="the day of the expense, YYYY-MM-DD")


class ExpenseRef(BaseModel):
    expense_id: int = Field(gt=0)


class Deleted(BaseModel):
    deleted: int
