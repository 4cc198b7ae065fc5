// The AI SDK's Chat (its AbstractChat, the class behind useChat, with the in-memory state a
// framework binding would provide) against agentstream: a message, a tool that asks for
// approval, the answer sent back automatically as the SDK does it, and the continued answer.
//
// node aisdk_chat.mjs '<plan>' with BASE_URL set. The plan: {"chatId", "text", "approve":
// true|false, "reason"?}. Prints {"afterAsk": [messages], "afterAnswer": [messages],
// "requests": [request bodies], "errors": [...]}.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';

class MemoryState {
  constructor() {
    this.status = 'ready';
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new MemoryState() }); }
  get snapshot() { return structuredClone(this.state.messages); }
}

const plan = JSON.parse(process.argv[2]);
const requests = [];
const errors = [];
const recordingFetch = async (url, init) => {
  if (init?.body) requests.push(JSON.parse(init.body));
  return fetch(url, init);
};
const finished = [];
let onFinish;
const chat = new Chat({
  id: plan.chatId,
  transport: new DefaultChatTransport({ api: `${process.env.BASE_URL}/ai-sdk/chat`, fetch: recordingFetch }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: (error) => errors.push(String(error.message)),
  onFinish: () => { finished.push(true); onFinish?.(); },
});

await chat.sendMessage({ text: plan.text });
const afterAsk = chat.snapshot;
const asking = afterAsk.at(-1).parts.find((p) => p.state === 'approval-requested');
const continued = new Promise((resolve) => { onFinish = resolve; });
await chat.addToolApprovalResponse({ id: asking.approval.id, approved: plan.approve, reason: plan.reason });
await continued;
process.stdout.write(JSON.stringify({ afterAsk, afterAnswer: chat.snapshot, requests, errors }));
