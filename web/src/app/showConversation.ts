/**
 * Opening a stored conversation into the chat, the same way wherever the chat lives: its
 * messages, and a run of it still going (a reload, another tab's or another page's question)
 * followed live from where this tab last saw it.
 */
import { clearRunMark, loadRunMark, openConversation } from "../chat/resume";
import { getConversation, type ApiOptions, type Conversation } from "../lib/api";
import type { ChatController } from "./useChat";

export async function showConversation(
  chat: Pick<ChatController, "reset" | "follow">,
  id: string,
  options: {
    api?: ApiOptions;
    /** A run that could not be followed: show the conversation as stored instead. */
    lostRun?: string | null;
    /** False once the user went elsewhere while this one loaded (then nothing is shown). */
    wanted?: () => boolean;
  } = {},
): Promise<Conversation | null> {
  chat.reset([], id);
  const conversation = await getConversation(id, options.api);
  if (options.wanted && !options.wanted()) return null;
  const opened = openConversation(conversation, loadRunMark(sessionStorage, id), {
    lostRun: options.lostRun ?? null,
  });
  if (opened.follow === null) clearRunMark(sessionStorage, id);
  chat.reset(opened.items, id);
  if (opened.follow !== null) chat.follow(opened.follow);
  return conversation;
}
