from django.conf import settings
from django.db import models


class Expense(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="expenses")
    amount_cents = models.PositiveIntegerField()
    description = models.CharField(max_length=200)
    spent_on = models.DateField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-spent_on", "-id"]

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.pk,
            "amount_cents": self.amount_cents,
            "description": self.description,
            "spent_on": self.spent_on.isoformat(),
        }
