"""The app's request and response models (FastAPI reads them; so does the agent's contract)."""

from pydantic import BaseModel, Field


class ExpenseIn(BaseModel):
    amount: float = Field(gt=0, le=100_000, description="The amount, in euros")
    note: str = Field(default="", max_length=200, description="What it was for")


class Expense(BaseModel):
    id: int
    amount: float
    note: str


class Deleted(BaseModel):
    deleted: int


class Login(BaseModel):
    username: str = Field(max_length=64)
    password: str = Field(max_length=128)
