"""The research assistant through the chat tray protocol (``POST /api/chat/stream``): the
streaming search with its progress stages and ``search_results`` payload, pages, tabs and
subtabs with their identities, context builders and tools, the ``query_suggestion`` and
``schema_proposal`` payloads, suggested values and actions, the ``apply_schema`` server
action, and diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from examples.research.app import build
from examples.research.corpus import ARTICLE_COUNT, Library
from tests.attachments import samples
from tests.examples.conftest import ServeExample
from tests.server.helpers import datas, parse_sse, stream_text

PATH = "/api/chat/stream"
EXTRACTION = {
    "current_page": "reports",
    "active_tab": "articles",
    "active_subtab": "extraction",
    "report_id": 1,
}


def chat(client: httpx.Client, message: str, **body: Any) -> list[dict[str, Any]]:
    response, text = stream_text(client, PATH, json={"message": message, **body})
    assert response.status_code == 200, text
    frames: list[dict[str, Any]] = datas(parse_sse(text))
    return frames


def complete(frames: list[dict[str, Any]]) -> dict[str, Any]:
    assert frames[-1]["type"] == "complete", frames[-1]
    payload: dict[str, Any] = frames[-1]["payload"]
    return payload


@pytest.fixture
def client(serve_example: ServeExample) -> Any:
    server = serve_example(build)
    with server.client() as c:
        yield c


def test_streaming_search_with_progress_results_and_a_query_suggestion(
    client: httpx.Client,
) -> None:
    frames = chat(client, "Find recent articles on CRISPR base editing")
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "status"
    start = next(f for f in frames if f["type"] == "tool_start")
    assert start["tool"] == "search_articles"
    assert start["input"] == {"query": "CRISPR base editing", "year_from": 2020}
    stages = [(f["stage"], f["message"]) for f in frames if f["type"] == "tool_progress"]
    assert [s for s, _ in stages] == ["parsing", "searching", "ranking"]
    assert stages[1][1] == "Found 4 articles..."
    done = next(f for f in frames if f["type"] == "tool_complete")
    assert done["tool"] == "search_articles" and done["index"] == 0
    streamed = "".join(f["text"] for f in frames if f["type"] == "text_delta")
    answer = complete(frames)

    # The stream carries the marker where the tool ran; the answer places it on its own line.
    def words(text: str) -> list[str]:
        return text.replace("[[tool:0]]", " [[tool:0]] ").split()

    assert words(streamed) == words(answer["message"])
    assert "[[tool:0]]" in answer["message"]
    assert "Offline demo" in answer["message"]
    assert "QUERY_SUGGESTION" not in streamed and "SUGGESTED_VALUES" not in streamed
    results = next(p for p in answer["payloads"] if p["type"] == "search_results")
    assert results["data"]["total"] == 4
    assert [a["id"] for a in results["data"]["articles"]][:1] == ["A0072"]
    assert all(a["year"] >= 2020 for a in results["data"]["articles"])
    assert results["summary"] == "4 articles for “CRISPR base editing”"
    # The card's table view reads columns every result row has.
    view = client.get("/api/chat/config").json()["payload_types"]["search_results"]["view"]
    assert view["kind"] == "table" and view["rows"] == "articles"
    keys = [column["key"] for column in view["columns"]]
    assert keys == ["id", "year", "title", "journal", "study_type"]
    assert all(set(keys) <= set(row) for row in results["data"]["articles"])
    suggestion = answer["custom_payload"]
    assert suggestion["type"] == "query_suggestion"
    assert suggestion["data"] == {
        "query": "CRISPR base editing randomised trial",
        "year_from": 2022,
        "rationale": "Randomised trials since 2022 give the strongest recent evidence.",
    }
    assert answer["suggested_values"][0] == {"label": "Read the first", "value": "Read A0072"}
    assert answer["tool_history"][0]["tool_name"] == "search_articles"
    diagnostics = answer["diagnostics"]
    assert diagnostics["tools"] == ["search_articles", "fetch_article"]
    assert "query_suggestion" in diagnostics["system_prompt"]
    assert "schema_proposal" not in diagnostics["system_prompt"]
    assert "QUERY_SUGGESTION:" in diagnostics["raw_llm_response"]


def test_a_subtab_has_its_identity_context_tools_and_schema_proposals(
    client: httpx.Client, tmp_path: Path
) -> None:
    frames = chat(client, "Find articles on base editing", context=EXTRACTION)
    answer = complete(frames)
    diagnostics = answer["diagnostics"]
    prompt = diagnostics["system_prompt"]
    assert prompt.startswith("You help the analyst decide which fields to extract")
    assert "Open report: #1 “Gene editing safety”." in prompt
    assert "Propose extraction fields as a schema_proposal" in prompt
    assert diagnostics["tools"] == [
        "search_articles",
        "fetch_article",
        "get_report",
        "add_article_to_report",
    ]
    proposal = answer["custom_payload"]
    assert proposal["type"] == "schema_proposal"
    assert proposal["summary"] == "Schema proposal: study_type, sample_size, off_target_rate"
    view = client.get("/api/chat/config").json()["payload_types"]["schema_proposal"]["view"]
    assert view["rows"] == "fields"
    assert all({c["key"] for c in view["columns"]} <= set(f) for f in proposal["data"]["fields"])
    (apply,) = answer["suggested_actions"]
    assert apply["action"] == "apply_schema" and apply["handler"] == "server"
    assert apply["data"]["report_id"] == 1

    applied = chat(
        client,
        "Apply schema",
        context=EXTRACTION,
        interaction_type="action_executed",
        action={"action": "apply_schema", "data": apply["data"]},
        conversation_id=answer["conversation_id"],
    )
    done = complete(applied)
    message = done["message"]
    assert message.startswith("Done. Applied to report #1 “Gene editing safety”: 3 field(s)")
    # The chip it offers next shows the report, not a corpus search for its words.
    (show,) = done["suggested_values"]
    assert show["value"] == "What does report #1 hold now?"
    # Asked where no report is open (the standalone UI sends no report_id), it names one.
    shown = chat(
        client,
        show["value"],
        context={k: v for k, v in EXTRACTION.items() if k != "report_id"},
        conversation_id=done["conversation_id"],
    )
    assert [f["tool"] for f in shown if f["type"] == "tool_start"] == ["get_report"]
    report_answer = complete(shown)["message"]
    assert "Report #1 “Gene editing safety”" in report_answer
    assert "off_target_rate (number)" in report_answer and "sample_size (integer)" in report_answer
    report = Library(tmp_path / "example" / "library.db").report(1)
    assert [f["name"] for f in report["fields"]] == ["off_target_rate", "sample_size", "study_type"]
    # The next prompt on the report shows the applied fields.
    later = complete(chat(client, "Find articles on prime editing", context=EXTRACTION))
    assert "Extraction fields: off_target_rate (number)" in later["diagnostics"]["system_prompt"]


def test_a_bad_or_unknown_action(client: httpx.Client) -> None:
    bad = chat(
        client,
        "Apply schema",
        interaction_type="action_executed",
        action={"action": "apply_schema", "data": {"report_id": 1, "fields": [{"name": "X"}]}},
    )
    assert "The action failed: the proposal is not valid" in complete(bad)["message"]
    missing = chat(
        client,
        "Apply schema",
        interaction_type="action_executed",
        action={
            "action": "apply_schema",
            "data": {
                "report_id": 99,
                "fields": [{"name": "n", "type": "integer", "description": "d"}],
            },
        },
    )
    assert "The action failed: no report 99" in complete(missing)["message"]
    unknown = client.post(
        PATH,
        json={
            "message": "x",
            "interaction_type": "action_executed",
            "action": {"action": "drop_report"},
        },
    )
    assert unknown.status_code == 400


def test_the_notes_tab_and_the_search_page(client: httpx.Client) -> None:
    notes = complete(
        chat(
            client,
            "Find articles on tau imaging",
            context={"current_page": "reports", "active_tab": "notes", "report_id": 2},
        )
    )["diagnostics"]
    assert notes["system_prompt"].startswith("You help the analyst keep the report's notes.")
    assert "Latest notes:\n- none yet" in notes["system_prompt"]
    assert notes["tools"] == [
        "search_articles",
        "fetch_article",
        "get_report",
        "add_note",
        "list_notes",
    ]
    search = complete(
        chat(client, "Find articles on dendrites", context={"current_page": "search"})
    )
    prompt = search["diagnostics"]["system_prompt"]
    assert prompt.startswith("You help the analyst search the article corpus well.")
    assert "Suggest a better query as a query_suggestion" in prompt


def test_fetch_article_and_an_unknown_id(client: httpx.Client) -> None:
    answer = complete(chat(client, "Read A0042"))
    history = answer["tool_history"][0]
    assert history["tool_name"] == "fetch_article"
    assert "**Solid-state batteries" in answer["message"] or "**" in answer["message"]
    (open_it,) = answer["suggested_actions"]
    assert open_it == {
        "label": "Open in the reader",
        "action": "open_article",
        "handler": "client",
        "data": {"article_id": "A0042", "url": "/host/?article=A0042"},
        "style": "secondary",
    }
    missing = chat(client, "Read A9999")
    done = next(f for f in missing if f["type"] == "tool_complete")
    assert done["is_error"] is True
    assert "no article 'A9999'" in complete(missing)["message"]


def test_the_corpus_and_its_index(tmp_path: Path) -> None:
    library = Library(tmp_path / "library.db")
    total, _ = library.search("the")
    assert library.article("a0001")["id"] == "A0001"
    assert library.article(f"A{ARTICLE_COUNT:04d}")
    with pytest.raises(LookupError):
        library.article(f"A{ARTICLE_COUNT + 1:04d}")
    assert total == ARTICLE_COUNT  # every abstract says "the"
    assert library.search('base" OR NEAR(x') == library.search("base or near x")
    total_all, _ = library.search("CRISPR")
    total_recent, recent = library.search("CRISPR", year_from=2023, limit=100)
    assert 0 < total_recent < total_all
    assert all(a["year"] >= 2023 for a in recent)
    assert library.search("  ") == (0, [])


def test_the_portal_the_tray_is_embedded_in(client: httpx.Client) -> None:
    """``/host/`` serves the research portal; its pages load the tray's script and name pages
    the server declares (so its context chooses tools), and the script is served."""
    import re

    config = client.get("/api/chat/config").json()
    declared = {page["name"] for page in config["pages"]}
    for path in ("/host/", "/host/search.html"):
        page = client.get(path)
        assert page.status_code == 200
        assert '<script src="/embed/agentstream-chat.js"></script>' in page.text
        assert "<agentstream-chat" in page.text
        named = re.search(r'data-page="([a-z_]+)"', page.text)
        assert named is not None and named.group(1) in declared
    script = client.get("/host/host.js").text
    assert "updateContext" in script and "open_article" in script


def test_the_portal_reads_what_the_assistant_changed(client: httpx.Client) -> None:
    """The portal's report page and reader read ``/example-api``: fields applied through the
    chat show there, and an article opens with its title and abstract."""
    before = client.get("/example-api/reports/1").json()
    assert before["name"] == "Gene editing safety" and before["fields"] == []
    fields = [{"name": "sample_size", "type": "integer", "description": "Participants"}]
    chat(
        client,
        "Apply schema",
        context=EXTRACTION,
        interaction_type="action_executed",
        action={"action": "apply_schema", "data": {"report_id": 1, "fields": fields}},
    )
    after = client.get("/example-api/reports/1").json()
    assert after["fields"] == fields
    article = client.get("/example-api/articles/a0072").json()
    assert article["id"] == "A0072" and article["title"] and article["abstract"]
    assert client.get("/example-api/articles/A9999").status_code == 404
    assert client.get("/example-api/reports/99").status_code == 404


def test_a_query_suggestion_s_button_runs_its_search(client: httpx.Client) -> None:
    answer = complete(chat(client, "Find recent articles on CRISPR base editing"))
    [suggestion] = [p for p in answer["payloads"] if p["type"] == "query_suggestion"]
    card = client.get("/api/chat/config").json()["payload_types"]["query_suggestion"]
    [button] = card["actions"]
    assert button["label"] == "Search"
    frames = chat(
        client,
        button["label"],
        interaction_type="action_executed",
        action={
            "action": button["action"],
            "data": {"payload_id": suggestion["payload_id"], "payload": suggestion["data"]},
        },
        conversation_id=answer["conversation_id"],
    )
    [started] = [f for f in frames if f["type"] == "tool_start"]
    assert started["tool"] == "search_articles"
    assert started["input"] == {
        "query": suggestion["data"]["query"],
        "year_from": suggestion["data"]["year_from"],
    }
    assert complete(frames)["message"].count("I found") == 1


def test_a_result_list_says_how_many_of_how_many_it_shows(client: httpx.Client) -> None:
    answer = complete(chat(client, "Find articles on editing"))
    [results] = [p for p in answer["payloads"] if p["type"] == "search_results"]
    shown, total = len(results["data"]["articles"]), results["data"]["total"]
    assert shown < total
    assert results["summary"] == f"The best {shown} of {total} articles for “editing”"


def test_a_dropped_pdf_is_named_by_the_offline_model_instead_of_searched(
    serve_example: ServeExample, tmp_path: Path
) -> None:
    server = serve_example(build, data_dir=tmp_path / "files")
    with server.client() as client:
        uploaded = client.post(
            "/api/attachments", files={"file": ("findings.pdf", samples.PDF, "application/pdf")}
        )
        assert uploaded.status_code == 201, uploaded.text
        frames = chat(client, "Summarize this", attachments=[uploaded.json()["id"]])
    answer = complete(frames)["message"]
    assert "I got 1 attachment: findings.pdf (a PDF)." in answer
    assert not [f for f in frames if f["type"] == "tool_start"]  # no search of the corpus


def test_the_page_s_filters_and_the_agent_s_search_stay_in_step(client: httpx.Client) -> None:
    # The page's filter applies to a search that names no year of its own ...
    frames = chat(client, "Find articles on base editing", state={"filters": {"year_from": 2023}})
    answer = complete(frames)
    [results] = [p for p in answer["payloads"] if p["type"] == "search_results"]
    assert results["data"]["year_from"] == 2023
    assert all(a["year"] >= 2023 for a in results["data"]["articles"])
    [delta] = [f["patch"] for f in frames if f["type"] == "state_delta"]
    assert delta == [{"op": "add", "path": "/query", "value": "base editing"}]
    # ... and a search that names one sets the page's filter.
    conversation = answer["conversation_id"]
    frames = chat(client, "Find articles on base editing since 2019", conversation_id=conversation)
    [delta] = [f["patch"] for f in frames if f["type"] == "state_delta"]
    assert {"op": "replace", "path": "/filters/year_from", "value": 2019} in delta
    stored = client.get(f"/api/conversations/{conversation}").json()["state"]
    assert stored == {"filters": {"year_from": 2019}, "query": "base editing"}
