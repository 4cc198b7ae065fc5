/**
 * `@agentstream/chat/element`, and the script-tag bundle the server serves at
 * `/embed/agentstream-chat.js`: importing it registers `<agentstream-chat>`.
 */
import { AgentstreamChatElement, defineAgentstreamChat } from "./element";

defineAgentstreamChat();

export { AgentstreamChatElement, defineAgentstreamChat };
export type { ClientActionHandler, PayloadRenderer } from "./element";
export type { HostContext } from "./context";
export type { TokenGetter } from "../lib/connection";
export type { TrayMode } from "./Tray";
