/**
 * `@agentstream/chat`: the chat tray for any web page, and the typed clients it is built on.
 *
 * - `<agentstream-chat>` ({@link AgentstreamChatElement}), registered by
 *   {@link defineAgentstreamChat} (the `@agentstream/chat/element` entry registers it on import);
 * - `@agentstream/chat/react`: a React component around the element (React is a peer);
 * - the stream client (`startChat`, `resumeChat`, typed tray events), the REST client
 *   (conversations, models, the server's chat config) and {@link authorizedFetch} for a bearer
 *   token, none of which needs a DOM;
 * - the shared state's change (`agentstream:state`, {@link StateChange}) and JSON Patch.
 */
export * from "../lib/stream";
export {
  deleteConversation,
  getClientConfig,
  getConversation,
  listConversations,
  listModels,
  renameConversation,
  type ActiveRun,
  type ApiOptions,
  type Conversation,
  type ConversationPage,
  type ConversationSummary,
  type ModelInfo,
  type StoredMessage,
  type StoredPendingCall,
} from "../lib/api";
export type { AreaView, ClientConfig, ContextFieldView, LocationKeys } from "../lib/config";
export { authorizedFetch, clientOptions, type Connection, type TokenGetter } from "../lib/connection";
export { applyPatch, PatchConflict } from "../lib/jsonPatch";
export { mergeContext, requestContextOf, type HostContext } from "./context";
export {
  AgentstreamChatElement,
  defineAgentstreamChat,
  TAG_NAME,
  type ClientActionHandler,
  type PayloadRenderer,
} from "./element";
export { STATE_EVENT, type StateChange, type StateSource } from "./sharedState";
export type { TrayMode } from "./Tray";
