"""Who reads ``/metrics``: off by default; when on, loopback clients and administrators."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.server.agents import tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import bearer, stream_text, token

FORWARDED = {"X-Forwarded-For": "203.0.113.7"}


def test_metrics_are_off_by_default(serve: Serve) -> None:
    server = serve(tray_agent())
    with server.client() as client:
        assert client.get("/metrics").status_code == 404


def test_a_loopback_client_reads_them_a_forwarded_one_needs_an_admin(serve: Serve) -> None:
    server = serve(tray_agent(), metrics=True, auth=True)
    alice = bearer(token("alice"))
    with server.client() as client:
        stream_text(client, "/api/chat/stream", json={"message": "hi"}, headers=alice)
        local = client.get("/metrics")
        assert local.status_code == 200
        names = {family.name for family in text_string_to_metric_families(local.text)}
        assert {"agentstream_runs_started", "agentstream_runs_active"} <= names

        # Through a proxy: the caller is somewhere else.
        anonymous = client.get("/metrics", headers=FORWARDED)
        assert anonymous.status_code == 401
        user = client.get("/metrics", headers={**FORWARDED, **alice})
        assert user.status_code == 403
        assert user.json()["detail"] == "Metrics are for administrators."
        admin = client.get(
            "/metrics", headers={**FORWARDED, **bearer(token("root", roles=["admin"]))}
        )
        assert admin.status_code == 200


def test_the_admin_role_and_its_claim_are_settings(serve: Serve) -> None:
    server = serve(
        tray_agent(),
        metrics=True,
        auth=True,
        admin_role="ops",
        roles_claim="realm_access.roles",
    )
    with server.client(headers=FORWARDED) as client:
        ops = bearer(token("root", realm_access={"roles": ["viewer", "ops"]}))
        assert client.get("/metrics", headers=ops).status_code == 200
        admin = bearer(token("root", roles=["admin"]))
        assert client.get("/metrics", headers=admin).status_code == 403


def test_with_a_port_of_their_own_they_are_not_on_the_servers(serve: Serve) -> None:
    server = serve(tray_agent(), metrics_port=1)
    with server.client() as client:
        assert client.get("/metrics").status_code == 404
