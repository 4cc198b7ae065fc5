"""The research assistant's library: a generated corpus of article records, indexed for
full-text search, and the reports analysts build from it (their articles, notes and the
fields they extract from each article). One SQLite file, created on first use.

The corpus is generated from a fixed seed, so every fresh clone has the same 320 articles.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from examples._common import SqliteFile

__all__ = ["ARTICLE_COUNT", "Library", "UnknownArticle", "UnknownReport"]

ARTICLE_COUNT = 320
SEED = 2026

TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "CRISPR": (
        ("base editing", "prime editing", "off-target effects", "delivery vectors"),
        ("Nature Biotechnology", "Cell", "Genome Research"),
    ),
    "mRNA vaccines": (
        ("lipid nanoparticles", "immunogenicity", "booster schedules", "thermostability"),
        ("The Lancet", "Vaccine", "NEJM"),
    ),
    "gut microbiome": (
        ("antibiotic recovery", "dietary fibre", "metabolites", "infant colonisation"),
        ("Cell Host & Microbe", "Gut", "Microbiome"),
    ),
    "Alzheimer's disease": (
        ("amyloid antibodies", "tau imaging", "blood biomarkers", "sleep"),
        ("Brain", "Neurology", "Alzheimer's & Dementia"),
    ),
    "solid-state batteries": (
        ("sulfide electrolytes", "dendrite suppression", "interface stability", "recycling"),
        ("Joule", "Nature Energy", "ACS Energy Letters"),
    ),
    "protein structure prediction": (
        ("language models", "complexes", "design", "conformational ensembles"),
        ("Science", "Nature Methods", "Bioinformatics"),
    ),
}
STUDY_TYPES = ("randomised trial", "cohort study", "meta-analysis", "in vitro study", "review")
FINDINGS = (
    "improved outcomes by {n}% over the comparator",
    "showed no significant difference (p = 0.{p})",
    "reduced adverse events by {n}%",
    "identified {n} previously unreported factors",
    "replicated earlier results in a larger sample",
)
SURNAMES = ("Chen", "Okafor", "Müller", "Rossi", "Kim", "Haddad", "Novak", "Silva", "Ito", "Berg")

SCHEMA = """
CREATE TABLE articles (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, authors TEXT NOT NULL, journal TEXT NOT NULL,
    year INTEGER NOT NULL, topic TEXT NOT NULL, study_type TEXT NOT NULL,
    sample_size INTEGER NOT NULL, abstract TEXT NOT NULL, keywords TEXT NOT NULL
);
CREATE VIRTUAL TABLE article_index USING fts5(
    id UNINDEXED, title, abstract, keywords, tokenize = 'porter unicode61'
);
CREATE TABLE reports (id INTEGER PRIMARY KEY, name TEXT NOT NULL, question TEXT NOT NULL);
CREATE TABLE report_articles (
    report_id INTEGER NOT NULL REFERENCES reports(id), article_id TEXT NOT NULL,
    PRIMARY KEY (report_id, article_id)
);
CREATE TABLE report_fields (
    report_id INTEGER NOT NULL REFERENCES reports(id), name TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT NOT NULL, PRIMARY KEY (report_id, name)
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, report_id INTEGER NOT NULL REFERENCES reports(id),
    article_id TEXT, text TEXT NOT NULL, author TEXT NOT NULL, created_at REAL NOT NULL
);
"""

REPORTS = [
    (1, "Gene editing safety", "How safe are current CRISPR base and prime editors?"),
    (2, "Battery outlook", "When will solid-state batteries reach cars?"),
]


class UnknownArticle(LookupError):
    pass


class UnknownReport(LookupError):
    pass


def _generate(rng: random.Random) -> Iterator[dict[str, Any]]:
    names = list(TOPICS)
    for i in range(1, ARTICLE_COUNT + 1):
        topic = names[i % len(names)]
        subtopics, journals = TOPICS[topic]
        sub = rng.choice(subtopics)
        study = rng.choice(STUDY_TYPES)
        year = rng.randint(2015, 2025)
        size = rng.choice((24, 60, 120, 480, 1200, 5200))
        finding = rng.choice(FINDINGS).format(n=rng.randint(5, 45), p=rng.randint(11, 89))
        authors = ", ".join(rng.sample(SURNAMES, 3))
        yield {
            "id": f"A{i:04d}",
            "title": f"{topic[0].upper()}{topic[1:]}: {sub} in "
            f"{'an' if study[0] in 'aeiou' else 'a'} {study} ({year})",
            "authors": authors,
            "journal": rng.choice(journals),
            "year": year,
            "topic": topic,
            "study_type": study,
            "sample_size": size,
            "abstract": (
                f"This {study} of {size} participants or samples examines {sub} in the "
                f"context of {topic}. The intervention {finding}. Limitations include "
                f"{rng.choice(('a short follow-up', 'a single site', 'selection bias'))}."
            ),
            "keywords": ", ".join((topic, sub, study)),
        }


class Library(SqliteFile):
    """The corpus and the reports, in the SQLite file at ``path``."""

    def _create(self, db: sqlite3.Connection) -> None:
        db.executescript(SCHEMA)
        for article in _generate(random.Random(SEED)):
            db.execute(
                "INSERT INTO articles VALUES (:id, :title, :authors, :journal, :year, "
                ":topic, :study_type, :sample_size, :abstract, :keywords)",
                article,
            )
            db.execute(
                "INSERT INTO article_index VALUES (:id, :title, :abstract, :keywords)",
                article,
            )
        db.executemany("INSERT INTO reports VALUES (?, ?, ?)", REPORTS)

    # --- articles -------------------------------------------------------------------------

    def search(
        self, query: str, *, year_from: int | None = None, limit: int = 10
    ) -> tuple[int, list[dict[str, Any]]]:
        """How many articles match ``query`` (every word, in any field), and the best
        ``limit`` of them by BM25. The query's words are data, never FTS5 syntax."""
        words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 1]
        if not words:
            return 0, []
        match = " ".join('"' + w + '"' for w in words)
        where = "article_index MATCH ?" + (" AND a.year >= ?" if year_from else "")
        params: list[Any] = [match, *([year_from] if year_from else [])]
        base = f"FROM article_index JOIN articles a ON a.id = article_index.id WHERE {where}"
        with self._connect() as db:
            total = int(db.execute(f"SELECT count(*) {base}", params).fetchone()[0])
            rows = db.execute(
                "SELECT a.id, a.title, a.journal, a.year, a.study_type, "
                f"round(-bm25(article_index), 3) AS score {base} "
                "ORDER BY bm25(article_index) LIMIT ?",
                (*params, limit),
            ).fetchall()
        return total, [dict(row) for row in rows]

    def article(self, article_id: str) -> dict[str, Any]:
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM articles WHERE id = ?", (article_id.strip().upper(),)
            ).fetchone()
        if row is None:
            raise UnknownArticle(f"no article {article_id!r} (ids look like A0042)")
        return dict(row)

    # --- reports --------------------------------------------------------------------------

    def report(self, report_id: int) -> dict[str, Any]:
        with self._connect() as db:
            row = db.execute("SELECT * FROM reports WHERE id = ?", (report_id,)).fetchone()
            if row is None:
                raise UnknownReport(f"no report {report_id}")
            articles = db.execute(
                "SELECT a.id, a.title, a.year FROM report_articles r "
                "JOIN articles a ON a.id = r.article_id WHERE r.report_id = ? ORDER BY a.id",
                (report_id,),
            ).fetchall()
            fields = db.execute(
                "SELECT name, type, description FROM report_fields WHERE report_id = ? "
                "ORDER BY name",
                (report_id,),
            ).fetchall()
        return {
            **dict(row),
            "articles": [dict(a) for a in articles],
            "fields": [dict(f) for f in fields],
        }

    def add_article(self, report_id: int, article_id: str) -> dict[str, Any]:
        article = self.article(article_id)
        self.report(report_id)
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO report_articles VALUES (?, ?)", (report_id, article["id"])
            )
        return self.report(report_id)

    def apply_fields(self, report_id: int, fields: list[dict[str, str]]) -> list[str]:
        """Add (or redefine) extraction fields of a report; returns their names."""
        self.report(report_id)
        with self._connect() as db:
            db.executemany(
                "INSERT OR REPLACE INTO report_fields VALUES (?, ?, ?, ?)",
                [(report_id, f["name"], f["type"], f["description"]) for f in fields],
            )
        return [f["name"] for f in fields]

    def add_note(self, report_id: int, text: str, author: str, article_id: str | None) -> int:
        self.report(report_id)
        if article_id is not None:
            article_id = self.article(article_id)["id"]
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO notes (report_id, article_id, text, author, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (report_id, article_id, text, author, time.time()),
            )
        return int(cursor.lastrowid or 0)

    def notes(self, report_id: int, limit: int = 20) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, article_id, text, author FROM notes WHERE report_id = ? "
                "ORDER BY id DESC LIMIT ?",
                (report_id, limit),
            ).fetchall()
        return [dict(row) for row in rows]


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
