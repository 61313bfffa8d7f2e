"""The expense tracker's tests, run with Django's own runner: `python manage.py test`.

The views as the app's page uses them, then the same views as an agent's procedures (served at
/api/agent/ by agentsurface.django): the call runs the view as the signed-in person, a
destructive one only with an approval the server minted for that very call. The agent tests
are TransactionTestCase: a procedure's view runs in a worker thread, on its own connection.
"""

import json
import uuid
from datetime import UTC, datetime

from django.contrib.auth.models import User
from django.test import Client, TestCase, TransactionTestCase

from .models import Expense

LUNCH = {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}


class ExpenseViewsTests(TestCase):
    def setUp(self):
        self.user = User.objects.create_user("ann", password="pw")
        self.client.force_login(self.user)

    def test_add_list_and_delete(self):
        added = self.client.post("/expenses/add/", json.dumps(LUNCH), content_type="application/json")
        self.assertEqual(added.status_code, 201)
        listed = self.client.get("/expenses/").json()
        self.assertEqual(listed["total_cents"], 1250)
        deleted = self.client.post(f"/expenses/{added.json()['id']}/delete/")
        self.assertEqual(deleted.json(), {"deleted": added.json()["id"]})
        self.assertFalse(Expense.objects.exists())

    def test_signed_out_people_are_sent_to_sign_in(self):
        self.client.logout()
        self.assertEqual(self.client.get("/expenses/").status_code, 302)


class AgentProcedureTests(TransactionTestCase):
    def setUp(self):
        self.user = User.objects.create_user("ann", password="pw")
        self.client = Client(enforce_csrf_checks=True)
        self.client.force_login(self.user)
        self.client.get("/")  # the page: sets the CSRF cookie its script sends back
        self.token = self.client.cookies["csrftoken"].value

    def call(self, name, input, invocation_id=None, confirmation=None, token=None):
        envelope = {"invocationId": invocation_id or uuid.uuid4().hex, "input": input}
        if confirmation:
            envelope["confirmation"] = confirmation
        response = self.client.post(
            f"/api/agent/procedures/{name}",
            json.dumps(envelope),
            content_type="application/json",
            HTTP_X_CSRFTOKEN=token or self.token,
        )
        return response.status_code, response.json()

    def test_the_agent_adds_and_lists_as_the_signed_in_person(self):
        status, body = self.call("expenses.add", LUNCH)
        self.assertEqual(status, 200)
        self.assertEqual(Expense.objects.get().owner, self.user)
        status, body = self.call("expenses.list", {"month": "2026-11"})
        self.assertEqual(body["output"]["total_cents"], 1250)

    def test_a_delete_needs_the_persons_approval_of_that_call(self):
        expense = Expense.objects.create(owner=self.user, amount_cents=5, description="tea", spent_on="2026-11-01")
        invocation = uuid.uuid4().hex
        status, body = self.call("expenses.delete", {"expense_id": expense.pk}, invocation)
        self.assertEqual((status, body["error"]["code"]), (428, "CONFIRMATION_REQUIRED"))
        self.assertTrue(Expense.objects.exists())
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # checked against the server's clock
        approval = {"challenge": body["challenge"]["id"], "approvedAt": now, "id": "cnf-1"}
        status, body = self.call("expenses.delete", {"expense_id": expense.pk}, invocation, approval)
        self.assertEqual((status, body["output"]), (200, {"deleted": expense.pk}))
        self.assertFalse(Expense.objects.exists())

    def test_a_call_without_the_csrf_token_is_refused(self):
        status, body = self.call("expenses.add", LUNCH, token="not-the-token-of-this-session-xx")
        self.assertEqual((status, body["error"]["code"]), (401, "NOT_AUTHENTICATED"))
        self.assertFalse(Expense.objects.exists())

    def test_the_clear_view_is_not_a_procedure(self):
        status, body = self.call("expenses.clear", {})
        self.assertEqual((status, body["error"]["code"]), (404, "CAPABILITY_NOT_FOUND"))
