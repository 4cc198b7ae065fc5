/**
 * Branches of the conversation shown: editing a question, answering one again, and moving
 * between the versions of a message (`< 2 / 3 >`). An edit or a regenerate is a message of
 * the chat's own protocol that names where it goes (`parent_message_id`, `regenerate`), so it
 * streams and resumes as any answer does; when it ends, the conversation is read again, so
 * every message has its stored id and its siblings. Switching versions asks the
 * conversations API. The server keeps every branch: switching only changes which one the
 * conversation continues.
 */
import { useRef, useState } from "preact/hooks";
import { localId, type AssistantItem, type ChatItem, type UserItem } from "../chat/model";
import { openConversation } from "../chat/resume";
import { getConversation, switchBranch, type ApiOptions } from "../lib/api";
import type { ChatController } from "./useChat";

export interface Branches {
  /** Ask the question `item` again as `text`. */
  edit(item: UserItem, text: string): void;
  /** A new answer in place of the last answer, `answer` (which stays, as a sibling). */
  regenerate(answer: AssistantItem): void;
  /** Show the branch through `sibling`, a version of the message `item` shows. */
  switchTo(item: ChatItem, sibling: string): void;
  /** Why the last of these failed, for the person to read. */
  error: string | null;
}

export function useBranches(chat: ChatController, connection: ApiOptions = {}): Branches {
  const [error, setError] = useState<string | null>(null);
  const latest = useRef({ chat, connection });
  latest.current = { chat, connection };

  /** Show conversation `id` as the server has it (following its run in progress, if any). */
  const show = (id: string, read: Promise<Parameters<typeof openConversation>[0]>) => {
    read
      .then((conversation) => {
        const now = latest.current.chat;
        if (now.conversationId !== id || now.busy) return; // the person went on meanwhile
        const opened = openConversation(conversation, null);
        now.reset(opened.items, id);
        if (opened.follow !== null) now.follow(opened.follow);
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  };
  const reread = (id: string | null) => () => {
    if (id !== null) show(id, getConversation(id, latest.current.connection));
  };

  return {
    error,
    edit(item, text) {
      const { chat } = latest.current;
      const question = text.trim();
      const at = chat.items.findIndex((it) => it.id === item.id);
      if (!question || at < 0 || chat.busy) return;
      const before = chat.items[at - 1];
      // The new question follows what the old one followed (nothing: it starts anew).
      const parent = before === undefined ? null : before.kind === "assistant" ? before.runId : (before.ref ?? null);
      if (before !== undefined && parent === null) {
        setError("This message cannot be edited until the answer before it is stored.");
        return;
      }
      setError(null);
      const edited: UserItem = { kind: "user", id: localId("u"), text: question };
      chat.branch(item.id, { message: question, parent_message_id: parent }, edited, reread(chat.conversationId));
    },
    regenerate(answer) {
      const { chat } = latest.current;
      if (chat.busy) return;
      setError(null);
      chat.branch(answer.id, { message: "", regenerate: true }, null, reread(chat.conversationId));
    },
    switchTo(_item, sibling) {
      const { chat, connection } = latest.current;
      const id = chat.conversationId;
      if (id === null || chat.busy) return;
      setError(null);
      show(id, switchBranch(id, sibling, connection));
    },
  };
}
