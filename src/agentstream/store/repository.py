"""The conversation store on SQLAlchemy: what the run pipeline and the REST API call.

:class:`SqlConversationStore` implements :class:`agentstream.runs.store.ConversationStore`
(``start_run``, ``append_messages``, ``finish_run``) and the methods behind
``/api/conversations`` (list, get, rename, delete, and a conversation's branches: siblings,
the active leaf, where an edit or another answer goes; see :mod:`agentstream.store.tree`).
Every method takes the caller's :class:`~agentstream.principal.Principal` and filters on
owner *and* tenant in the same statement that reads or writes, so there is no window where
another user's conversation is visible; a conversation that exists but is not the caller's
raises :class:`ConversationNotFound`, exactly like one that does not exist.

Each run-pipeline write is a *work* handed to :class:`~agentstream.store.commits.GroupCommit`,
which commits the works of concurrent callers together in one short transaction. A work starts
by bumping the conversation row (``UPDATE ... RETURNING``), which both checks ownership and
takes the row's lock (PostgreSQL) or runs under the database's write lock (SQLite, ``BEGIN
IMMEDIATE``), so the message ``seq`` and run ``ordinal`` it allocates are never handed out
twice. Committed is committed: the user message is durable before ``start_run`` returns, each
tool round-trip when ``append_messages`` returns. The REST API's reads and writes are ordinary
transactions of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.orm import Session

from agentstream.accounting import UsageGroup, UsageLine
from agentstream.agent.summaries import ContextSummary
from agentstream.attachments.types import Attachment
from agentstream.errors import MessageNotFound
from agentstream.events import AnswerShaped, RunCompleted, RunUsage, Usage
from agentstream.ids import new_id
from agentstream.messages import Message, UserMessage
from agentstream.pending import (
    Answers,
    InvalidAnswers,
    answered_message,
    check_answers,
    open_calls,
)
from agentstream.principal import Principal
from agentstream.runs.broker import conversation_key
from agentstream.runs.request import Branch
from agentstream.runs.store import (
    ConversationNotFound,
    ConversationStore,
    ConversationTree,
    InterruptedRuns,
    ObservedCommits,
    QueuedRuns,
    ResumableRuns,
    ResumedRun,
    RunStatus,
    SharedStates,
    SharedTurns,
    StartedRun,
    UsageReader,
)
from agentstream.state import PatchConflict
from agentstream.store.attachments import refer
from agentstream.store.checkpoints import Checkpointer
from agentstream.store.commits import (
    AsyncTransactions,
    GroupCommit,
    Refused,
    ThreadTransactions,
    Transactions,
)
from agentstream.store.engine import (
    create_engine,
    is_sqlite,
    safe_url,
    sqlite_file_writer,
    use_wal,
    writer,
)
from agentstream.store.errors import (
    InvalidConversationId,
    InvalidCursor,
    StoreNotMigrated,
    UnknownRun,
)
from agentstream.store.history import load_messages
from agentstream.store.migrate import current_revision, head_revision, upgrade
from agentstream.store.models import (
    TITLE_LENGTH,
    ConversationRow,
    MessageRow,
    RunRow,
    UsageRow,
    utcnow,
)
from agentstream.store.statements import (
    Bumped,
    before,
    bump,
    canonical,
    claim,
    claim_seq,
    create,
    decode_cursor,
    display,
    display_with_active_run,
    encode_cursor,
    exists,
    finish,
    insert_messages,
    insert_run,
    merge_metadata,
    normalize_conversation_id,
    owned,
    owned_row,
    record_usage,
    run_ordinal,
    run_outcome,
)
from agentstream.store.states import change_state, read_state, write_state
from agentstream.store.summaries import write_summary
from agentstream.store.titles import clean_title, title_from_message
from agentstream.store.tree import (
    BranchPoint,
    advance,
    branch_for,
    branch_point,
    descend,
    head,
    resolve,
    run_start,
    run_tip,
    set_leaf,
    sibling_ids,
)
from agentstream.store.turns import database_locks
from agentstream.store.views import (
    ConversationDetail,
    ConversationPage,
    ConversationSummary,
)

__all__ = [
    "InvalidConversationId",
    "InvalidCursor",
    "SqlConversationStore",
    "StoreNotMigrated",
    "UnknownRun",
    "normalize_conversation_id",
]

log = logging.getLogger("agentstream.store")

MAX_PAGE = 100
WRITE_TRANSACTIONS = 4
"""Group-commit transactions at a time on a database with row locks (PostgreSQL)."""
_CREATE_ATTEMPTS = 3
MARK_BATCH = 500
"""Run ids per statement when marking runs interrupted."""


@dataclass(frozen=True, slots=True)
class _OpenRun:
    """A run in progress: its conversation, ordinal, and the message its next one follows."""

    conversation_id: str
    ordinal: int
    tip: str | None


class SqlConversationStore:
    """Conversations in a SQL database. Open with :meth:`open` (applies migrations on SQLite)
    or wrap an engine whose schema is up to date; :meth:`close` disposes the engine::

        async with await SqlConversationStore.open("postgresql+asyncpg://app@db/app") as store:
            page = await store.list_conversations(principal, limit=20)

    Every method acts for a principal: another user's or tenant's conversation is
    :class:`ConversationNotFound`, exactly as one that does not exist."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = async_sessionmaker(engine, expire_on_commit=False)
        self._writes = async_sessionmaker(writer(engine), expire_on_commit=False)
        # SQLite has one writer: one transaction at a time, shared by whoever is waiting.
        sqlite = engine.dialect.name == "sqlite"
        file_writer = sqlite_file_writer(engine)
        transactions: Transactions = (
            AsyncTransactions(writer(engine))
            if file_writer is None
            else ThreadTransactions(file_writer, Checkpointer(file_writer))
        )
        committers = 1 if sqlite else WRITE_TRANSACTIONS
        self._commits = GroupCommit(transactions, committers=committers)
        self._open: dict[str, _OpenRun] = {}
        """Runs this process started and has not finished, and where they are."""
        self._locks = database_locks(engine)
        """Conversations this process holds, as the database keeps them (``take_turn``)."""

    @classmethod
    async def open(cls, url: str | None = None, *, migrate: bool | None = None) -> Self:
        """A store for ``url`` (default: ``AGENTSTREAM_DATABASE_URL`` or the SQLite file).
        ``migrate`` defaults to True on SQLite; PostgreSQL is upgraded by
        ``agentstream db upgrade`` as a deploy step."""
        store = cls(create_engine(url))
        try:
            await store.prepare(migrate=migrate)
        except BaseException:
            await store.close()
            raise
        return store

    async def prepare(self, *, migrate: bool | None = None) -> None:
        """Make the database ready for the store, as :meth:`open` does: WAL on SQLite, then
        migrations (``migrate``, default on SQLite) or a check that the schema is there
        (:class:`~agentstream.errors.StoreNotMigrated`). For a store built before its event
        loop runs (``create_app(database_url=...)`` prepares it when the app starts)."""
        await use_wal(self._engine)
        if migrate if migrate is not None else is_sqlite(self._engine.url):
            await upgrade(self._engine)
        else:
            await _check_schema(self._engine)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    def observe_commits(self, callback: Callable[[float], None]) -> None:
        """Tell ``callback`` how long each write transaction took to commit, in seconds (see
        :class:`~agentstream.runs.store.ObservedCommits`)."""
        self._commits.on_commit = callback

    @property
    def write_transactions(self) -> int:
        """Write transactions committed by the run pipeline so far: fewer than its writes when
        concurrent runs shared them (see :mod:`agentstream.store.commits`)."""
        return self._commits.committed

    async def reach(self) -> None:
        """Raise unless the database answers a query now (a readiness probe,
        :mod:`agentstream.server.health`)."""
        async with self._engine.connect() as connection:
            await connection.execute(select(1))

    async def close(self) -> None:
        await self._commits.close()
        if self._locks is not None:
            await self._locks.close()
        await self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- the run pipeline ---------------------------------------------------------------------

    async def start_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str | None,
        user_message: str | None,
        model: str | None = None,
        metadata: dict[str, Any] | None = None,
        create_if_missing: bool = False,
        answers: Answers | None = None,
        branch: Branch | None = None,
        attachments: Sequence[Attachment] = (),
        history_bound: int | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> StartedRun:
        """Commit the user message (and the page's state) and return the history before
        it and the state the run starts from. See
        :meth:`ConversationStore.start_run`."""
        wanted: str | None = None
        if conversation_id is not None:
            wanted = normalize_conversation_id(conversation_id)
            if wanted is None:
                if create_if_missing:
                    raise InvalidConversationId(
                        "conversation id must be 1 to 64 letters, digits, '-', '_', '.' or ':'"
                    )
                raise ConversationNotFound(conversation_id)
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                return await self._start_run(
                    principal,
                    run_id=run_id,
                    conversation_id=wanted,
                    user_message=user_message,
                    model=model,
                    metadata=metadata,
                    create_if_missing=create_if_missing,
                    answers=answers,
                    branch=branch,
                    attachments=tuple(attachments),
                    history_bound=history_bound,
                    state=state,
                )
            except IntegrityError:
                # PostgreSQL: another request created this id between our check and insert.
                # Try again; it now exists and is ours, or it is someone else's (404). Any
                # other conflict (a reused run id) is a bug in the caller: no retry.
                if not create_if_missing or attempt == _CREATE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _start_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str | None,
        user_message: str | None,
        model: str | None,
        metadata: dict[str, Any] | None,
        create_if_missing: bool,
        answers: Answers | None,
        branch: Branch | None,
        attachments: tuple[Attachment, ...],
        history_bound: int | None,
        state: Mapping[str, Any] | None,
    ) -> StartedRun:
        cid = conversation_id or new_id()
        if answers and conversation_id is None:
            raise InvalidAnswers("answers need the conversation whose tool calls they answer")

        def work(conn: Connection) -> tuple[StartedRun, _OpenRun]:
            now = utcnow()
            bumped: Bumped | None = None
            created = False
            if conversation_id is not None:
                count = (user_message is not None) + bool(answers)
                bumped = bump(conn, principal, cid, count, now, new_run=True, model=model)
                if bumped is None and not (create_if_missing and not exists(conn, cid)):
                    raise Refused(ConversationNotFound(conversation_id))
            if bumped is None:
                if answers:  # a new (or someone else's) conversation waits for nothing
                    raise Refused(InvalidAnswers("no tool calls are waiting for an answer"))
                bumped = create(conn, principal, cid, user_message or "", now, model, metadata)
                created = True
            elif metadata:
                bumped = merge_metadata(conn, cid, bumped, metadata)
            ordinal = bumped.next_ordinal - 1
            leaf = bumped.active_leaf
            point = BranchPoint(leaf, leaf) if branch is None else branch_point(conn, cid, branch)
            parent = point.parent
            read = before(conn, point.context, history_bound)
            history = read.history
            opening: list[Message] = []
            if answers:
                # Checked under the conversation's lock, so two requests cannot both answer
                # one call. Raised after the bump: the group commit rolls back and re-runs
                # the other works without this one.
                waiting = open_calls(history)
                if not waiting:
                    raise InvalidAnswers("no tool calls are waiting for an answer")
                check_answers(waiting, answers)
                opening.append(answered_message(waiting, answers))
            if user_message is not None:
                # Checked under the same lock: an upload swept a moment ago fails the
                # message rather than leave it naming nothing.
                refer(conn, principal, [a.id for a in attachments], now)
                opening.append(UserMessage(content=user_message, attachments=attachments))
            insert_run(conn, cid, run_id, ordinal, model, now, parent)
            tip = insert_messages(
                conn, cid, run_id, ordinal, bumped.next_seq, now, opening, parent=parent
            )
            if tip != bumped.active_leaf:
                set_leaf(conn, cid, tip)
            # The run's own question starts the exchange it answers: a summary it writes of
            # all that came before is kept there.
            own = [tip] if user_message is not None and tip is not None else []
            stored = None if created else read_state(conn, cid)
            if state is not None:
                write_state(conn, cid, state, now, stored)
                stored = dict(state)
            started = StartedRun(
                conversation_id=cid,
                first_run=ordinal == 0,
                title=bumped.title,
                history=history,
                metadata=bumped.metadata,
                payloads=read.payloads,
                asked=point.asked,
                summary=read.summary,
                exchanges=[*read.exchanges, *own],
                state=stored,
            )
            return started, _OpenRun(cid, ordinal, tip)

        started, opened = await self._commits.run(work, key=cid)
        self._open[run_id] = opened
        return started

    def _where(self, conn: Connection, run_id: str, cid: str) -> _OpenRun:
        """Where run ``run_id`` is in conversation ``cid``: its ordinal and the message its
        next one follows (remembered from its last write when this process made it). Raises
        :class:`UnknownRun`."""
        known = self._open.get(run_id)
        if known is not None and known.conversation_id == cid:
            return known
        ordinal = run_ordinal(conn, run_id, cid)
        if ordinal is None:
            raise UnknownRun(f"run {run_id} was not started in this conversation")
        return _OpenRun(cid, ordinal, run_tip(conn, cid, run_id))

    def _wrote(self, run_id: str, where: _OpenRun, tip: str | None) -> None:
        """Remember the run's new last message once its transaction committed (a work may be
        run again after a rollback, so it changes nothing outside the database itself)."""
        if run_id in self._open:
            self._open[run_id] = replace(where, tip=tip)

    async def append_messages(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str,
        messages: Sequence[Message],
    ) -> None:
        """Commit a finished tool round-trip (or any messages the run produced so far)."""
        if not messages:
            return
        cid = canonical(conversation_id)

        def work(conn: Connection) -> tuple[_OpenRun, str | None]:
            now = utcnow()
            next_seq = claim_seq(conn, principal, cid, len(messages), now)
            where = self._where(conn, run_id, cid)
            tip = insert_messages(
                conn, cid, run_id, where.ordinal, next_seq, now, messages, parent=where.tip
            )
            advance(conn, cid, where.ordinal, where.tip, tip)
            return where, tip

        where, tip = await self._commits.run(work, key=cid)
        self._wrote(run_id, where, tip)

    async def finish_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str,
        messages: Sequence[Message],
        status: RunStatus,
        completed: RunCompleted | None = None,
        shaped: AnswerShaped | None = None,
        error: str | None = None,
        snapshot: bool = True,
        usage: RunUsage | None = None,
    ) -> ConversationDetail | None:
        """Commit the run's last messages, status and usage (entered in the usage ledger
        too); return the conversation as it now stands (the answers as shown, without
        details), or None without ``snapshot``."""
        cid = canonical(conversation_id)
        status_of_answer = "complete" if status == "completed" else "interrupted"

        def work(conn: Connection) -> ConversationDetail | None:
            now = utcnow()
            # The conversation row is read back only for the snapshot.
            bumped = claim(conn, principal, cid, len(messages), now) if snapshot else None
            next_seq = (
                bumped.next_seq if bumped else claim_seq(conn, principal, cid, len(messages), now)
            )
            outcome = run_outcome(status, completed, shaped, error, now, usage)
            where = self._where(conn, run_id, cid)
            if finish(conn, run_id, cid, outcome) is None:
                raise UnknownRun(f"run {run_id} was not started in this conversation")
            if usage is not None:
                record_usage(conn, principal, run_id, cid, status, usage, now)
            tip = insert_messages(
                conn,
                cid,
                run_id,
                where.ordinal,
                next_seq,
                now,
                messages,
                status_of_answer,
                parent=where.tip,
            )
            advance(conn, cid, where.ordinal, where.tip, tip)
            if bumped is None:
                return None
            assert bumped.summary is not None
            shown = display(conn, cid, details=False)
            return ConversationDetail(
                summary=bumped.summary, metadata=bumped.metadata, messages=shown
            )

        try:
            return await self._commits.run(work, key=cid)
        finally:
            self._open.pop(run_id, None)

    # --- runs whose worker died ----------------------------------------------------------------

    async def change_state(
        self, principal: Principal, conversation_id: str, patch: Sequence[Mapping[str, Any]]
    ) -> bool:
        """Apply a run's change to the conversation's shared state. See
        :class:`~agentstream.runs.store.SharedStates`."""
        cid = canonical(conversation_id)

        def work(conn: Connection) -> bool:
            now = utcnow()
            claim_seq(conn, principal, cid, 0, now)  # the owner's, and its row's lock
            try:
                change_state(conn, cid, patch, now)
            except PatchConflict as exc:
                log.warning("a change to the state of conversation %s did not apply: %s", cid, exc)
                return False
            return True

        return await self._commits.run(work, key=cid)

    async def running_runs(self) -> list[str]:
        """The ids of the runs still marked ``running`` (see :class:`InterruptedRuns`)."""
        async with self._reads() as session:
            return list(await session.scalars(select(RunRow.id).where(RunRow.status == "running")))

    async def mark_interrupted(self, run_ids: Sequence[str], error: str) -> int:
        """Mark those of ``run_ids`` still ``running`` as ``interrupted``, in batches of
        :data:`MARK_BATCH` (a bound parameter list stays short)."""
        marked, now = 0, utcnow()
        async with self._writes.begin() as session:
            for start in range(0, len(run_ids), MARK_BATCH):
                result = await session.execute(
                    update(RunRow)
                    .where(
                        RunRow.id.in_(run_ids[start : start + MARK_BATCH]),
                        RunRow.status == "running",
                    )
                    .values(status="interrupted", error=error, finished_at=now)
                    .returning(RunRow.id)
                )
                marked += len(result.all())
        return marked

    # --- the usage ledger ----------------------------------------------------------------------

    async def usage_report(
        self,
        *,
        first_day: date,
        last_day: date,
        group_by: Sequence[UsageGroup],
        tenant_id: str | None = None,
        user_id: str | None = None,
    ) -> list[UsageLine]:
        """The usage ledger summed (see :class:`~agentstream.runs.store.UsageReader`)."""
        keys = [_USAGE_KEYS[group] for group in group_by]
        unpriced = case((UsageRow.cost_usd.is_(None), 1), else_=0)
        estimated = case((UsageRow.estimated, 1), else_=0)
        query = (
            select(
                *keys,
                func.count(),
                *(func.coalesce(func.sum(column), 0) for column in _USAGE_TOKENS),
                func.coalesce(func.sum(UsageRow.cost_usd), 0.0),
                func.coalesce(func.sum(estimated), 0),
                func.coalesce(func.sum(unpriced), 0),
            )
            .where(UsageRow.day >= first_day.isoformat(), UsageRow.day <= last_day.isoformat())
            .group_by(*keys)
            .order_by(*keys)
        )
        if tenant_id is not None:
            query = query.where(UsageRow.tenant_id == tenant_id)
        if user_id is not None:
            query = query.where(UsageRow.user_id == user_id)
        async with self._reads() as session:
            rows = (await session.execute(query)).all()
        lines = []
        for row in rows:
            groups, (runs, *tokens, cost, estimated_runs, unpriced_runs) = (
                row[: len(keys)],
                row[len(keys) :],
            )
            lines.append(
                UsageLine(
                    group=dict(zip(group_by, map(str, groups), strict=True)),
                    runs=int(runs),
                    usage=Usage(
                        **{c.key: int(n) for c, n in zip(_USAGE_TOKENS, tokens, strict=True)}
                    ),
                    cost_usd=float(cost),
                    estimated_runs=int(estimated_runs),
                    unpriced_runs=int(unpriced_runs),
                )
            )
        return lines

    # --- the REST API -------------------------------------------------------------------------

    async def list_conversations(
        self, principal: Principal, *, limit: int = 20, cursor: str | None = None
    ) -> ConversationPage:
        """The caller's conversations, most recently active first. ``cursor`` is the
        ``next_cursor`` of the previous page."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE}")
        query = (
            select(ConversationRow)
            .where(*owned(principal))
            .order_by(ConversationRow.updated_at.desc(), ConversationRow.id.desc())
            .limit(limit + 1)
        )
        if cursor is not None:
            after_time, after_id = decode_cursor(cursor)
            query = query.where(
                or_(
                    ConversationRow.updated_at < after_time,
                    and_(ConversationRow.updated_at == after_time, ConversationRow.id < after_id),
                )
            )
        async with self._reads() as session:
            rows = list(await session.scalars(query))
        more = len(rows) > limit
        rows = rows[:limit]
        return ConversationPage(
            items=tuple(ConversationSummary.from_row(row) for row in rows),
            next_cursor=encode_cursor(rows[-1]) if more else None,
        )

    async def get_conversation(
        self, principal: Principal, conversation_id: str
    ) -> ConversationDetail:
        conversation_id = canonical(conversation_id)
        async with self._reads() as session:
            row = await owned_row(session, principal, conversation_id)
            messages, active = await session.run_sync(
                lambda sync: display_with_active_run(sync, conversation_id)
            )
            state = await session.run_sync(
                lambda sync: read_state(sync.connection(), conversation_id)
            )
            return ConversationDetail(
                summary=ConversationSummary.from_row(row),
                metadata=dict(row.metadata_ or {}),
                messages=messages,
                active_run=active,
                state=state,
            )

    async def run_context(
        self,
        principal: Principal,
        conversation_id: str,
        run_id: str,
        history_bound: int | None = None,
    ) -> StartedRun:
        """The history and payloads before run ``run_id``, as they stand now (see
        :class:`~agentstream.runs.store.QueuedRuns`)."""
        conversation_id = canonical(conversation_id)
        async with self._reads() as session:
            row = await owned_row(session, principal, conversation_id)
            ordinal = await session.scalar(
                select(RunRow.ordinal).where(
                    RunRow.id == run_id, RunRow.conversation_id == conversation_id
                )
            )
            if ordinal is None:
                raise UnknownRun(run_id)
            read = await session.run_sync(
                lambda sync: before(
                    sync.connection(),
                    run_start(sync.connection(), conversation_id, run_id),
                    history_bound,
                )
            )
            state = await session.run_sync(
                lambda sync: read_state(sync.connection(), conversation_id)
            )
            return StartedRun(
                conversation_id=conversation_id,
                title=row.title,
                history=read.history,
                metadata=dict(row.metadata_ or {}),
                payloads=read.payloads,
                first_run=ordinal == 0,
                summary=read.summary,
                exchanges=read.exchanges,
                state=state,
            )

    async def resume_context(
        self,
        principal: Principal,
        conversation_id: str,
        run_id: str,
        history_bound: int | None = None,
    ) -> ResumedRun:
        """The run as it stands (see :class:`~agentstream.runs.store.ResumableRuns`): what
        :meth:`run_context` reads, and the run's own messages in the order it wrote them."""
        context = await self.run_context(principal, conversation_id, run_id, history_bound)
        async with self._reads() as session:
            status = await session.scalar(select(RunRow.status).where(RunRow.id == run_id))
            bodies = await session.scalars(
                select(MessageRow.body)
                .where(
                    MessageRow.conversation_id == context.conversation_id,
                    MessageRow.run_id == run_id,
                )
                .order_by(MessageRow.seq)
            )
            messages = load_messages(bodies)
        return ResumedRun(context=context, messages=messages, running=status == "running")

    async def runs_before(
        self, principal: Principal, conversation_id: str, run_id: str
    ) -> list[str]:
        """See :class:`~agentstream.runs.store.QueuedRuns`."""
        conversation_id = canonical(conversation_id)
        mine = (
            select(RunRow.ordinal)
            .where(RunRow.id == run_id, RunRow.conversation_id == conversation_id)
            .scalar_subquery()
        )
        async with self._reads() as session:
            await owned_row(session, principal, conversation_id)
            found = await session.scalars(
                select(RunRow.id)
                .where(
                    RunRow.conversation_id == conversation_id,
                    RunRow.status == "running",
                    RunRow.ordinal < mine,
                )
                .order_by(RunRow.ordinal)
            )
            return list(found)

    async def take_turn(
        self, principal: Principal, conversation_id: str
    ) -> tuple[bool, str | None]:
        """Hold the conversation for this process (see
        :class:`~agentstream.runs.store.SharedTurns` and :mod:`agentstream.store.turns`)."""
        if self._locks is None or await self._locks.take(
            conversation_key(principal, conversation_id)
        ):
            return True, None
        async with self._reads() as session:
            holder = await session.scalar(
                select(RunRow.id)
                .where(RunRow.conversation_id == conversation_id, RunRow.status == "running")
                .order_by(RunRow.ordinal.desc())
                .limit(1)
            )
        return False, holder

    async def give_back_turn(self, principal: Principal, conversation_id: str) -> None:
        if self._locks is not None:
            await self._locks.give_back(conversation_key(principal, conversation_id))

    async def history(self, principal: Principal, conversation_id: str) -> list[Message]:
        """The conversation's active path as provider history (what the next run would
        continue)."""
        conversation_id = canonical(conversation_id)
        async with self._reads() as session:
            row = await owned_row(session, principal, conversation_id)
            leaf = row.active_leaf_id
            read = await session.run_sync(lambda sync: before(sync.connection(), leaf))
            return read.history

    async def save_summary(
        self,
        principal: Principal,
        *,
        conversation_id: str,
        run_id: str,
        before_id: str,
        summary: ContextSummary,
    ) -> bool:
        """See :class:`~agentstream.runs.store.KeptSummaries`."""
        cid = canonical(conversation_id)

        def work(conn: Connection) -> bool:
            now = utcnow()
            if bump(conn, principal, cid, 0, now) is None:
                raise Refused(ConversationNotFound(conversation_id))
            return write_summary(conn, cid, before_id, run_id, summary, now)

        return await self._commits.run(work, key=cid)

    # --- branches ------------------------------------------------------------------------------

    async def siblings(
        self, principal: Principal, conversation_id: str, message_id: str
    ) -> tuple[str, ...]:
        """See :class:`~agentstream.runs.store.ConversationTree`."""
        conversation_id = canonical(conversation_id)
        async with self._reads() as session:
            await owned_row(session, principal, conversation_id)

            def read(sync: Session) -> tuple[str, ...]:
                node = head(sync, conversation_id, message_id)
                if node is not None:
                    return sibling_ids(sync, conversation_id, [node])[0]
                if resolve(sync, conversation_id, message_id) is None:
                    raise MessageNotFound(message_id)
                return (message_id,)  # an answer that wrote nothing stands alone

            return await session.run_sync(read)

    async def set_active(
        self, principal: Principal, conversation_id: str, message_id: str
    ) -> ConversationDetail:
        """See :class:`~agentstream.runs.store.ConversationTree`."""
        conversation_id = canonical(conversation_id)
        async with self._writes.begin() as session:
            await owned_row(session, principal, conversation_id)

            def write(sync: Session) -> None:
                node = resolve(sync, conversation_id, message_id)
                if node is None:
                    raise MessageNotFound(message_id)
                set_leaf(sync, conversation_id, descend(sync, conversation_id, node.id))

            await session.run_sync(write)
        return await self.get_conversation(principal, conversation_id)

    async def branch_for(
        self, principal: Principal, conversation_id: str, message_id: str, *, again: bool
    ) -> Branch:
        """See :class:`~agentstream.runs.store.ConversationTree`."""
        conversation_id = canonical(conversation_id)
        async with self._reads() as session:
            await owned_row(session, principal, conversation_id)
            return await session.run_sync(
                lambda sync: branch_for(sync, conversation_id, message_id, again=again)
            )

    async def rename_conversation(
        self, principal: Principal, conversation_id: str, title: str
    ) -> ConversationSummary:
        """Set the title the user chose (a generated title never replaces it), cleaned by
        :func:`~agentstream.store.titles.clean_title`; the activity time ``updated_at`` does
        not change."""
        title = clean_title(title, TITLE_LENGTH)
        return await self._set_title(principal, conversation_id, title, "user", only_from=None)

    async def set_generated_title(
        self, principal: Principal, conversation_id: str, title: str
    ) -> str | None:
        """Store a model-generated title (made one line, at most 60 characters) unless the
        user renamed the conversation. Returns the stored title, or None."""
        title = title_from_message(title)
        try:
            summary = await self._set_title(
                principal, conversation_id, title, "model", only_from="message"
            )
        except ConversationNotFound:
            return None
        return summary.title if summary.title == title else None

    async def _set_title(
        self,
        principal: Principal,
        conversation_id: str,
        title: str,
        source: str,
        only_from: str | None,
    ) -> ConversationSummary:
        conversation_id = canonical(conversation_id)
        async with self._writes.begin() as session:
            row = await owned_row(session, principal, conversation_id)
            if only_from is None or row.title_source == only_from:
                row.title = title
                row.title_source = source
            return ConversationSummary.from_row(row)

    async def delete_conversation(self, principal: Principal, conversation_id: str) -> None:
        conversation_id = canonical(conversation_id)
        async with self._writes.begin() as session:
            result = await session.execute(
                delete(ConversationRow)
                .where(ConversationRow.id == conversation_id, *owned(principal))
                .returning(ConversationRow.id)
            )
            if result.first() is None:
                raise ConversationNotFound(conversation_id)


_USAGE_KEYS = {
    "user": UsageRow.user_id,
    "tenant": UsageRow.tenant_id,
    "model": UsageRow.model,
    "day": UsageRow.day,
}
_USAGE_TOKENS = (
    UsageRow.input_tokens,
    UsageRow.output_tokens,
    UsageRow.reasoning_tokens,
    UsageRow.cache_read_tokens,
    UsageRow.cache_write_tokens,
)


async def _check_schema(engine: AsyncEngine) -> None:
    """Fail at start, with the fix in the message, rather than on every request later."""
    current = await current_revision(engine)
    if current is None:
        raise StoreNotMigrated(
            f"the database {safe_url(engine.url)} has no agentstream tables yet: "
            "run `agentstream db upgrade`"
        )
    if current != head_revision():
        log.warning(
            "the database is at revision %s and this version expects %s: "
            "run `agentstream db upgrade` if it is older",
            current,
            head_revision(),
        )


if TYPE_CHECKING:

    def _implements_the_protocol(store: SqlConversationStore) -> ConversationStore:
        return store  # mypy checks SqlConversationStore against the runner's protocol

    def _keeps_trees(store: SqlConversationStore) -> ConversationTree:
        return store

    def _reads_usage(store: SqlConversationStore) -> UsageReader:
        return store

    def _observes_commits(store: SqlConversationStore) -> ObservedCommits:
        return store

    def _marks_interrupted_runs(store: SqlConversationStore) -> InterruptedRuns:
        return store

    def _reads_queued_runs(store: SqlConversationStore) -> QueuedRuns:
        return store

    def _resumes_runs(store: SqlConversationStore) -> ResumableRuns:
        return store

    def _shares_turns(store: SqlConversationStore) -> SharedTurns:
        return store

    def _keeps_states(store: SqlConversationStore) -> SharedStates:
        return store
