// The AI SDK's Chat (its AbstractChat, the class behind useChat, with the in-memory state a
// framework binding would provide) against agentstream: a message, a tool that asks for
// approval, the answer sent back automatically as the SDK does it, and the continued answer.
//
// node aisdk_chat.mjs '<plan>' with BASE_URL set. The plan: {"chatId", "text", "approve":
// true|false, "reason"?}. Prints {"afterAsk": [messages], "afterAnswer": [messages],
// "requests": [request bodies], "errors": [...]}. With "reloadBeforeAnswer": true the
// approval is answered by a new Chat started from the stored messages, as after a reload.
//
// With {"chatId", "text", "reload": true}: the page's Chat is stopped (stop(): the client
// disconnects) once the answer has begun; a new Chat, as after a reload, starts from the
// stored messages (GET /ai-sdk/chat/{id}/messages) and resumes the answer (resumeStream()).
// Prints {"beforeReload": [messages], "loaded": [messages], "afterResume": [messages],
// "errors": [...]}.
//
// With {"chatId", "edit": {"texts": [...], "at": n, "text": "..."}}: each of "texts" sent in
// turn, then the n-th user message (from 0) edited with sendMessage({text, messageId}), then
// regenerate() of the answer to it. Prints {"sent": [messages], "afterEdit": [messages],
// "afterRegenerate": [messages], "loaded": [messages], "requests": [request bodies],
// "errors": [...]}.
//
// With {"chatId", "text", "files": [file parts]}: sendMessage({text, files}); then a new
// Chat, as after a reload, starts from the stored messages and sends the files they show
// again with another text. Prints {"loaded": [messages], "afterSecond": [messages],
// "requests": [request bodies], "errors": [...]}.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';

class MemoryState {
  constructor(messages = []) {
    this.status = 'ready';
    this.error = undefined;
    this.messages = messages;
  }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new MemoryState(init.messages) }); }
  get snapshot() { return structuredClone(this.state.messages); }
}

const plan = JSON.parse(process.argv[2]);
const requests = [];
const errors = [];
const recordingFetch = async (url, init) => {
  if (init?.body) requests.push(JSON.parse(init.body));
  return fetch(url, init);
};
let onFinish;
const newChat = (messages) => new Chat({
  id: plan.chatId,
  messages,
  transport: new DefaultChatTransport({ api: `${process.env.BASE_URL}/ai-sdk/chat`, fetch: recordingFetch }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: (error) => errors.push(String(error.message)),
  onFinish: () => onFinish?.(),
});
let chat = newChat([]);

if (plan.edit) {
  for (const text of plan.edit.texts) await chat.sendMessage({ text });
  const sent = chat.snapshot;
  const edited = sent.filter((m) => m.role === 'user')[plan.edit.at];
  await chat.sendMessage({ text: plan.edit.text, messageId: edited.id });
  const afterEdit = chat.snapshot;
  await chat.regenerate();
  const afterRegenerate = chat.snapshot;
  const api = `${process.env.BASE_URL}/ai-sdk/chat`;
  const loaded = await (await fetch(`${api}/${plan.chatId}/messages`)).json();
  process.stdout.write(JSON.stringify({ sent, afterEdit, afterRegenerate, loaded, requests, errors }));
  process.exit(0);
}

if (plan.files) {
  await chat.sendMessage({ text: plan.text, files: plan.files });
  const api = `${process.env.BASE_URL}/ai-sdk/chat`;
  const loaded = await (await fetch(`${api}/${plan.chatId}/messages`)).json();
  const reloaded = newChat(loaded);
  const shown = loaded[0].parts.filter((p) => p.type === 'file');
  await reloaded.sendMessage({ text: 'And this one?', files: shown });
  process.stdout.write(JSON.stringify({ loaded, afterSecond: reloaded.snapshot, requests, errors }));
  process.exit(0);
}

if (plan.reload) {
  const sending = chat.sendMessage({ text: plan.text });
  const answering = () => {
    const last = chat.snapshot.at(-1);
    return last?.role === 'assistant' && last.parts.some((p) => p.type === 'text' && p.text);
  };
  while (!answering()) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await chat.stop();
  await sending;
  const beforeReload = chat.snapshot;
  const api = `${process.env.BASE_URL}/ai-sdk/chat`;
  const loaded = await (await fetch(`${api}/${plan.chatId}/messages`)).json();
  const reloaded = new Chat({
    id: plan.chatId,
    messages: loaded,
    transport: new DefaultChatTransport({ api }),
    onError: (error) => errors.push(String(error.message)),
  });
  await reloaded.resumeStream();
  const afterResume = reloaded.snapshot;
  process.stdout.write(JSON.stringify({ beforeReload, loaded, afterResume, errors }));
  process.exit(0);
}

await chat.sendMessage({ text: plan.text });
if (plan.reloadBeforeAnswer) {  // a reloaded page answers, from the stored messages
  const api = `${process.env.BASE_URL}/ai-sdk/chat`;
  chat = newChat(await (await fetch(`${api}/${plan.chatId}/messages`)).json());
}
const afterAsk = chat.snapshot;
const asking = afterAsk.at(-1).parts.find((p) => p.state === 'approval-requested');
const continued = new Promise((resolve) => { onFinish = resolve; });
await chat.addToolApprovalResponse({ id: asking.approval.id, approved: plan.approve, reason: plan.reason });
await continued;
process.stdout.write(JSON.stringify({ afterAsk, afterAnswer: chat.snapshot, requests, errors }));
