// The AI SDK's own client, unchanged, against agentstream: DefaultChatTransport posts and
// reconnects, readUIMessageStream builds the assistant message from the chunks. Keeps the
// conversation's messages the way useChat does (user message appended, assistant message
// from the stream appended; regenerate drops the last answer first).
//
// node aisdk_client.mjs '<plan>' with BASE_URL set. The plan: {"chatId", "onlyLast"?,
// "steps": [...]};
// a step is {"send": "text"} (optionally "dropAfter" or "stopAfter": a number of text
// deltas), {"regenerate": true}, {"resume": true} or {"load": true} (the chat's stored
// messages, checked by the SDK's own validation). Prints one JSON result per step:
// {"chunks": [...], "message": {...} | null, "errors": [...], "status"?, "messages"?}.
import { DefaultChatTransport, readUIMessageStream, safeValidateUIMessages } from 'ai';

const base = process.env.BASE_URL;
const plan = JSON.parse(process.argv[2]);
const chatId = plan.chatId;
const api = `${base}/ai-sdk/chat`;
// "onlyLast": send only the last message, as the SDK's docs suggest when the server keeps
// the chat.
const onlyLast = plan.onlyLast
  ? {
    prepareSendMessagesRequest: ({ id, messages: all, trigger, messageId }) => ({
      body: { id, message: all[all.length - 1], trigger, messageId },
    }),
  }
  : {};
const transport = new DefaultChatTransport({ api, ...onlyLast });
let messages = [];
let userCount = 0;

async function consume(stream, { after, onDelta } = {}) {
  const chunks = [];
  const errors = [];
  let relay;
  const relayed = new ReadableStream({ start(controller) { relay = controller; } });
  const snapshots = readUIMessageStream({
    stream: relayed,
    message: after,
    onError: (error) => errors.push(String(error.message ?? error)),
  });
  const collected = (async () => {
    let last = null;
    for await (const snapshot of snapshots) last = snapshot;
    return last;
  })();
  const reader = stream.getReader();
  let deltas = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      relay.enqueue(value);
      if (value.type === 'text-delta') {
        deltas += 1;
        if (onDelta && (await onDelta(deltas))) break;
      }
    }
  } catch (error) {
    errors.push(`stream: ${error.name}`);
  }
  relay.close();
  return { chunks, message: await collected, errors };
}

async function send(step) {
  const abort = new AbortController();
  const trigger = step.regenerate ? 'regenerate-message' : 'submit-message';
  let messageId;
  if (step.regenerate) {
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant') {
      messageId = last.id;
      messages = messages.slice(0, -1);
    }
  } else {
    userCount += 1;
    messages = [
      ...messages,
      { id: `user-${userCount}`, role: 'user', parts: [{ type: 'text', text: step.send }] },
    ];
  }
  let stream;
  try {
    stream = await transport.sendMessages({
      chatId,
      messages,
      trigger,
      messageId,
      abortSignal: abort.signal,
    });
  } catch (error) {
    return { chunks: [], message: null, errors: [String(error.message)] };
  }
  const onDelta = async (count) => {
    if (step.dropAfter === count) {
      abort.abort();
      return true;
    }
    if (step.stopAfter === count) {
      const stopped = await fetch(`${api}/${encodeURIComponent(chatId)}/stop`, { method: 'POST' });
      if (stopped.status !== 202) throw new Error(`stop answered ${stopped.status}`);
    }
    return false;
  };
  const result = await consume(stream, { onDelta });
  if (result.message) messages = [...messages, result.message];
  return result;
}

async function resume() {
  const stream = await transport.reconnectToStream({ chatId });
  if (stream === null) return { chunks: [], message: null, errors: [], status: 204 };
  // The resumed stream is the whole answer again: it replaces the partial one.
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') messages = messages.slice(0, -1);
  const result = await consume(stream);
  if (result.message) messages = [...messages, result.message];
  return result;
}

async function load() {
  const response = await fetch(`${api}/${encodeURIComponent(chatId)}/messages`);
  const loaded = await response.json();
  const checked = await safeValidateUIMessages({ messages: loaded });
  const errors = checked.success ? [] : [String(checked.error.message)];
  return { chunks: [], message: null, errors, status: response.status, messages: loaded };
}

const results = [];
for (const step of plan.steps) {
  if (step.load) results.push(await load());
  else results.push(step.resume ? await resume() : await send(step));
}
process.stdout.write(JSON.stringify(results));
