/**
 * The ChatTray's message states: user bubble (see `Question`), thinking bubble, streaming
 * answer with pulsing dots, amber tool-progress cards, final Markdown with inline tool cards,
 * chips, action buttons, payload cards, reasoning trace, token usage and inline errors.
 */
import type { ComponentChildren } from "preact";
import { useId, useState } from "preact/hooks";
import type { ApprovalView, AssistantItem, ChatItem, ToolCall, ToolProgressView, UserItem } from "../chat/model";
import { CONTINUE_MESSAGE, cutOffNotice, payloadKind, totalTokens } from "../chat/model";
import { segments } from "../chat/places";
import { formatCount, formatValue } from "../lib/format";
import { finishedDisplay, type PayloadTypeView } from "../lib/payloads";
import type { CustomPayload, SuggestedAction, Usage } from "../lib/stream";
import { MessageAttachments } from "./Attachments";
import { AlertIcon, BugIcon, ChevronIcon, RefreshIcon, SparkIcon, WrenchIcon } from "./icons";
import { Question, Versions } from "./Question";
import { Markdown } from "./Markdown";
import { memo } from "./memo";
import { PayloadCard } from "./PayloadCard";
import { AppFrame, VIEW_PAYLOAD, viewPayloadData, type ViewsHost } from "../views/AppFrame";
import { GROUP, useReveal } from "./useReveal";

export interface MessageHandlers {
  onSend(text: string, interactionType?: string): void;
  onAction(action: SuggestedAction): void;
  onRetry(answerId: string): void;
  /** Take back a message waiting for the answer before it. */
  onUnqueue(id: string): void;
  /** Branches of a stored conversation: ask a question again as other text, answer it again,
   * show another version of a message. Absent: the chat has no branches (no store). */
  branches?: {
    edit(item: UserItem, text: string): void;
    regenerate(answer: AssistantItem): void;
    switchTo(item: ChatItem, sibling: string): void;
  };
  /** The user approved or rejected a tool call waiting for them. */
  onDecide(answerId: string, callId: string, approved: boolean, reason?: string): void;
  onDiagnostics(diagnostics: Record<string, unknown>): void;
  /** How each payload type's card is drawn (from the server's config). */
  payloadTypes: Record<string, PayloadTypeView>;
  /** Draw a payload some other way (a host page's own view); `card` is the built-in one, to
   * fall back on. Rendered under `key`, unique in the conversation. */
  renderPayload?(payload: CustomPayload, card: ComponentChildren, key: string): ComponentChildren;
  /** Draw the results of tools that have an interactive view with it (MCP Apps); absent:
   * they are drawn as payload cards. */
  views?: ViewsHost;
}

/**
 * The conversation, in groups of {@link GROUP} messages that the browser skips while they are
 * out of view. A group, and a message in it, is drawn again only when something in it changed:
 * a streamed delta redraws its own answer, nothing else (`handlers` must therefore keep their
 * identity). A long conversation is drawn newest first ({@link useReveal}).
 */
export function MessageList(props: {
  items: ChatItem[];
  busy: boolean;
  /** The conversation is stored, so it can branch (its messages offer edit and versions;
   * while an answer streams they are shown but do nothing, without drawing every message
   * again). */
  branching?: boolean;
  handlers: MessageHandlers;
}) {
  const { items } = props;
  const from = useReveal(items);
  const lastId = items[items.length - 1]?.id ?? null;
  // Groups start at multiples of GROUP, each keyed by where it starts: the first one drawn
  // may hold fewer while older messages are still to come, and keeps its place as they do.
  const groups: number[] = [];
  for (let start = from - (from % GROUP); start < items.length; start += GROUP) groups.push(start);
  return (
    <div
      class="messages-list"
      role="list"
      data-branching={props.branching ? "" : undefined}
      data-busy={props.busy ? "" : undefined}
    >
      {groups.map((start) => {
        const end = start + GROUP;
        return (
          <Group
            key={start}
            items={items.slice(Math.max(start, from), end)}
            lastId={end >= items.length ? lastId : null}
            busy={end >= items.length && props.busy}
            handlers={props.handlers}
          />
        );
      })}
    </div>
  );
}

interface GroupProps {
  items: ChatItem[];
  /** The conversation's last message, when it is in this group. */
  lastId: string | null;
  busy: boolean;
  handlers: MessageHandlers;
}

const Group = memo(
  function Group(props: GroupProps) {
    return (
      <div class="message-group">
        {props.items.map((item) => (
          <Row
            key={item.id}
            item={item}
            isLast={item.id === props.lastId}
            busy={item.id === props.lastId && props.busy}
            handlers={props.handlers}
          />
        ))}
      </div>
    );
  },
  (a, b) => a.lastId === b.lastId && a.busy === b.busy && a.handlers === b.handlers && sameItems(a.items, b.items),
);

function sameItems(a: readonly ChatItem[], b: readonly ChatItem[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

const Row = memo(function Row(props: { item: ChatItem; isLast: boolean; busy: boolean; handlers: MessageHandlers }) {
  const { item } = props;
  return item.kind === "user" ? (
    <Question item={item} handlers={props.handlers} />
  ) : (
    <div class="row row-assistant" role="listitem">
      <Answer item={item} isLast={props.isLast} busy={props.busy} handlers={props.handlers} />
    </div>
  );
});

function Answer(props: { item: AssistantItem; isLast: boolean; busy: boolean; handlers: MessageHandlers }) {
  const { item, handlers } = props;
  const streaming = item.status === "streaming";
  const hasText = item.text.trim() !== "";
  const interactive = props.isLast && !props.busy && item.status === "complete";
  // A new answer in place of the last one, once it has ended (its question stays).
  const again = !!handlers.branches && props.isLast && !props.busy && !streaming && !!item.runId && !!item.request;
  const versions = !!handlers.branches && !streaming && (item.siblings?.length ?? 0) > 1;

  if (streaming && !hasText && item.running.length === 0 && !item.reasoning) {
    return (
      <div class="bubble bubble-thinking" data-testid="thinking" role="status">
        <span>{item.statusText ?? "Thinking..."}</span>
        <Dots />
      </div>
    );
  }

  return (
    <div class="answer" data-testid="assistant-message" data-status={item.status} aria-busy={streaming}>
      {item.reasoning && <Reasoning text={item.reasoning} streaming={streaming && !hasText} />}
      {(hasText ||
        item.running.length > 0 ||
        item.tools.length > 0 ||
        (item.status === "complete" && item.payloads.length === 0)) && (
        <div class={`bubble bubble-assistant${streaming ? " is-streaming" : ""}`}>
          <AnswerBody item={item} />
          {item.running.map((r) => (
            <ProgressCard key={r.callId} progress={r} />
          ))}
          {streaming && <Dots />}
          {!hasText && item.tools.length === 0 && item.running.length === 0 && (
            <p class="muted">(no text in this answer)</p>
          )}
        </div>
      )}
      {streaming && item.running.length === 0 && item.statusText && hasText && (
        <p class="status-line" role="status">
          {item.statusText}
        </p>
      )}
      {item.payloads.map((p, i) => {
        const key = `${item.id}:${p.payload_id ?? i}`;
        // A view needs a stored conversation (its document is kept with it); without a
        // store the result is drawn as a payload card.
        const views = handlers.views?.conversation() != null ? handlers.views : undefined;
        const view = views && payloadKind(p) === VIEW_PAYLOAD ? viewPayloadData(p.data) : null;
        const card = view && views ? (
          <AppFrame key={key} view={view} host={views} />
        ) : (
          <PayloadCard
            key={key}
            payload={p}
            type={handlers.payloadTypes[payloadKind(p)]}
            enabled={interactive}
            onAction={handlers.onAction}
          />
        );
        return handlers.renderPayload ? handlers.renderPayload(p, card, key) : card;
      })}
      {item.approvals.map((a) => (
        <ApprovalCard
          key={a.callId}
          approval={a}
          enabled={interactive && !a.decision}
          onDecide={(approved, reason) => handlers.onDecide(item.id, a.callId, approved, reason)}
        />
      ))}
      {item.status === "cancelled" && (
        <p class="note note-stopped" data-testid="stopped">
          Stopped.
        </p>
      )}
      {item.status === "complete" && item.cutOff && (
        <div class="note note-cut-off" role="status" data-testid="cut-off">
          <span>{cutOffNotice(item.cutOff)}</span>
          {props.isLast && (
            <button
              type="button"
              class="btn btn-secondary btn-small"
              onClick={() => handlers.onSend(CONTINUE_MESSAGE)}
              disabled={props.busy}
            >
              Continue
            </button>
          )}
        </div>
      )}
      {item.status === "error" && (
        <div class="error-box" role="alert" data-testid="error">
          <AlertIcon />
          <div class="error-text">
            <strong>Something went wrong.</strong> <span>{item.error}</span>
          </div>
          {props.isLast && item.request && (
            <button type="button" class="btn btn-secondary btn-small" onClick={() => handlers.onRetry(item.id)} disabled={props.busy}>
              Retry
            </button>
          )}
        </div>
      )}
      {interactive && item.suggestedValues.length > 0 && (
        <div class="chips" role="group" aria-label="Suggested replies">
          {item.suggestedValues.map((v) => (
            <button
              type="button"
              class="chip"
              key={`${v.label}:${v.value}`}
              onClick={() => handlers.onSend(v.value, "value_selected")}
            >
              {v.label}
            </button>
          ))}
        </div>
      )}
      {interactive && item.suggestedActions.length > 0 && (
        <div class="actions" role="group" aria-label="Suggested actions">
          {item.suggestedActions.map((a) => (
            <button
              type="button"
              class={`btn btn-${a.style ?? "secondary"}`}
              key={`${a.action}:${a.label}`}
              onClick={() => handlers.onAction(a)}
            >
              {a.label}
            </button>
          ))}
        </div>
      )}
      {(hasUsage(item.usage) || item.diagnostics || again || versions) && (
        <div class="meta">
          {versions && <Versions item={item} id={item.runId} onSwitch={handlers.branches!.switchTo} />}
          {again && (
            <button type="button" class="link-btn branch-btn" onClick={() => handlers.branches!.regenerate(item)}>
              <RefreshIcon /> Regenerate
            </button>
          )}
          {hasUsage(item.usage) && <UsageLine usage={item.usage!} />}
          {item.diagnostics && (
            <button
              type="button"
              class="link-btn"
              onClick={() => handlers.onDiagnostics(item.diagnostics!)}
            >
              <BugIcon /> Diagnostics
            </button>
          )}
        </div>
      )}
    </div>
  );
}

function AnswerBody({ item }: { item: AssistantItem }) {
  return (
    <>
      {segments(item.text, item.tools).map((s) =>
        s.kind === "text" ? (
          <Markdown key={`text@${s.start}`} text={s.text} />
        ) : (
          <ToolCard key={`tool${s.index}`} call={item.tools.find((t) => t.index === s.index)} index={s.index} />
        ),
      )}
    </>
  );
}

function Dots() {
  return (
    <span class="dots" aria-hidden="true">
      <span />
      <span />
      <span />
    </span>
  );
}

export function ToolCard({ call, index }: { call: ToolCall | undefined; index: number }) {
  const [open, setOpen] = useState(false);
  const id = `tool-${useId()}`;
  const name = call?.name ?? `tool ${index}`;
  return (
    <div class={`tool-card${call?.isError ? " is-error" : ""}`} data-testid="tool-card">
      <button
        type="button"
        class="tool-head"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen(!open)}
      >
        <WrenchIcon />
        {call?.display ? (
          <>
            <span class="tool-display" data-testid="tool-display">
              {call.done ? finishedDisplay(call.display) : call.display}
            </span>
            <span class="tool-name tool-name-secondary">{name}</span>
          </>
        ) : (
          <span class="tool-name">{name}</span>
        )}
        {call?.stopped && <span class="badge badge-stopped">stopped</span>}
        {call?.isError && !call.stopped && <span class="badge badge-error">failed</span>}
        {isDenial(call?.output) && <span class="badge badge-stopped">declined</span>}
        {typeof call?.durationMs === "number" && call.durationMs > 0 && (
          <span class="tool-time">{formatDuration(call.durationMs)}</span>
        )}
        <span class={`chevron${open ? " is-open" : ""}`}>
          <ChevronIcon />
        </span>
        <span class="visually-hidden">{open ? "Hide details" : "Show details"}</span>
      </button>
      {call?.attachments?.length ? (
        <div class="tool-files">
          <MessageAttachments attachments={call.attachments} />
        </div>
      ) : null}
      {open && (
        <div class="tool-body" id={id}>
          <div class="tool-section" role="group" aria-labelledby={`${id}-in`}>
            <div class="tool-label" id={`${id}-in`}>
              Input
            </div>
            <pre>{formatValue(call?.input ?? {})}</pre>
          </div>
          <div class="tool-section" role="group" aria-labelledby={`${id}-out`}>
            <div class="tool-label" id={`${id}-out`}>
              Output
            </div>
            {call?.stopped ? (
              <p class="muted">None: the answer was stopped while this tool ran.</p>
            ) : call?.output !== undefined ? (
              <pre>{formatValue(call.output)}</pre>
            ) : (
              <p class="muted">Available when the answer is complete.</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

/** A tool call waiting for the user: what would run, with Approve and Reject. A rejection
 * may say why (the model reads it). Once decided the card says so. */
function ApprovalCard(props: {
  approval: ApprovalView;
  enabled: boolean;
  onDecide(approved: boolean, reason?: string): void;
}) {
  const { approval } = props;
  const [reason, setReason] = useState("");
  const id = `approval-${useId()}`;
  const decision = approval.decision;
  return (
    <section
      class="approval-card"
      data-testid="approval-card"
      data-state={decision ? (decision.approved ? "approved" : "rejected") : "waiting"}
      aria-labelledby={`${id}-title`}
    >
      <div class="approval-head">
        <WrenchIcon />
        <h3 class="approval-title" id={`${id}-title`}>
          {decision ? (decision.approved ? "Approved: " : "Rejected: ") : "Approval needed: "}
          <span class="tool-name">{approval.name}</span>
        </h3>
      </div>
      {approval.display && <p class="approval-display">{approval.display}</p>}
      <div class="tool-label" id={`${id}-args`}>
        Arguments
      </div>
      <pre class="approval-args" aria-labelledby={`${id}-args`} data-testid="approval-args">
        {formatValue(approval.input)}
      </pre>
      {!decision && (
        <div class="approval-actions">
          <input
            class="approval-reason"
            type="text"
            aria-label="Reason for rejecting (optional)"
            placeholder="Reason for rejecting (optional)"
            value={reason}
            maxLength={2000}
            disabled={!props.enabled}
            onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
          />
          <button
            type="button"
            class="btn btn-primary"
            disabled={!props.enabled}
            onClick={() => props.onDecide(true)}
          >
            Approve
          </button>
          <button
            type="button"
            class="btn btn-warning"
            disabled={!props.enabled}
            onClick={() => props.onDecide(false, reason.trim() || undefined)}
          >
            Reject
          </button>
        </div>
      )}
      {decision && !decision.approved && decision.reason && (
        <p class="approval-reason-shown muted">Reason: {decision.reason}</p>
      )}
    </section>
  );
}

/** A result that says the user declined the call (the server's denial result; the tray
 * protocol carries outputs as text, a stored conversation as JSON). */
function isDenial(output: unknown): boolean {
  let value = output;
  if (typeof output === "string" && output.startsWith("{")) {
    try {
      value = JSON.parse(output);
    } catch {
      return false;
    }
  }
  return typeof value === "object" && value !== null && (value as { denied?: unknown }).denied === true;
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function ProgressCard({ progress }: { progress: ToolProgressView }) {
  const fraction = typeof progress.progress === "number" ? Math.max(0, Math.min(1, progress.progress)) : null;
  return (
    <div class="progress-card" data-testid="tool-progress" role="status">
      <div class="progress-head">
        <span class="spinner" aria-hidden="true" />
        <span class="tool-name">{progress.display ?? progress.name}</span>
        {progress.stage && <span class="stage">{progress.stage}</span>}
      </div>
      {progress.message && <p class="progress-message">{progress.message}</p>}
      <div
        class={`progress-bar${fraction === null ? " is-indeterminate" : ""}`}
        role="progressbar"
        aria-label={`${progress.name} progress`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)}
      >
        <span style={fraction === null ? undefined : { width: `${fraction * 100}%` }} />
      </div>
    </div>
  );
}

function Reasoning({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <details class="reasoning" data-testid="reasoning">
      <summary>
        {streaming ? "Reasoning..." : "Reasoning trace"}
        {streaming && <Dots />}
      </summary>
      <div class="reasoning-body">{text}</div>
    </details>
  );
}

function hasUsage(usage: Usage | null): boolean {
  return !!usage && totalTokens(usage) + (usage.reasoning_tokens ?? 0) + (usage.cache_read_tokens ?? 0) > 0;
}

function UsageLine({ usage }: { usage: Usage }) {
  const parts: string[] = [
    `${formatCount(usage.input_tokens ?? 0)} in`,
    `${formatCount(usage.output_tokens ?? 0)} out`,
  ];
  if (usage.reasoning_tokens) parts.push(`${formatCount(usage.reasoning_tokens)} reasoning`);
  if (usage.cache_read_tokens) parts.push(`${formatCount(usage.cache_read_tokens)} cached`);
  return (
    <span class="usage" data-testid="usage" title={`${formatCount(totalTokens(usage))} tokens in total`}>
      <span class="visually-hidden">Token usage: </span>
      {parts.join(" · ")} tokens
    </span>
  );
}

export function EmptyState({
  prompts,
  onPick,
  appName,
}: {
  prompts: string[];
  onPick(text: string): void;
  appName?: string | null;
}) {
  return (
    <div class="empty" data-testid="empty-state">
      <div class="empty-mark">
        <SparkIcon />
      </div>
      <h2 data-testid="app-name">{appName ?? "How can I help today?"}</h2>
      <p class="muted">
        {(appName ? "How can I help today? " : "") +
          (prompts.length ? "Ask a question, or start from one of these." : "Ask a question.")}
      </p>
      <div class="examples" role="group" aria-label="Example prompts">
        {prompts.map((p) => (
          <button type="button" class="example" key={p} onClick={() => onPick(p)}>
            {p}
          </button>
        ))}
      </div>
    </div>
  );
}
