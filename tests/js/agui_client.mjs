// AG-UI's official client (@ag-ui/client's HttpAgent), unchanged, against a live agentstream
// server: `node agui_client.mjs <scenario>` with BASE_URL set. HttpAgent verifies the order of
// the events it reads (a start without its end, content outside its message, RUN_FINISHED
// while something is open all throw); the scenario prints what the client ended with as JSON.
import { HttpAgent } from '@ag-ui/client';
import { randomUUID } from 'node:crypto';

const url = new URL('/ag-ui', process.env.BASE_URL).toString();
const scenario = process.argv[2];

function newAgent() {
  const agent = new HttpAgent({ url, threadId: `thread-${randomUUID()}` });
  const seen = [];
  agent.subscribe({ onEvent: ({ event }) => { seen.push(event); } });
  return { agent, seen };
}

function say(agent, text) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
}

function summary(agent, seen, extra = {}) {
  return {
    types: seen.map((e) => e.type),
    events: seen,
    messages: agent.messages,
    pendingInterrupts: agent.pendingInterrupts,
    ...extra,
  };
}

const scenarios = {
  // Three exchanges; then the second question edited (the client's list cut after the first
  // answer, the new text sent), then another answer asked for (the list cut after the
  // question): what the client keeps, as a page that edits and regenerates would.
  async branches() {
    const { agent, seen } = newAgent();
    for (const text of ['Hi', 'Tell a jkoe', 'Never mind']) {
      say(agent, text);
      await agent.runAgent();
    }
    const sent = structuredClone(agent.messages);
    const second = sent.findIndex((m) => m.role === 'user' && m.content === 'Tell a jkoe');
    agent.setMessages(sent.slice(0, second));
    say(agent, 'Tell a joke');
    await agent.runAgent();
    const afterEdit = structuredClone(agent.messages);
    const asked = afterEdit.findLastIndex((m) => m.role === 'user');
    agent.setMessages(afterEdit.slice(0, asked + 1));
    await agent.runAgent();
    return summary(agent, seen, { sent, afterEdit, threadId: agent.threadId });
  },

  // Shared state: the page's filters go with the run, a server tool changes them, and the
  // client applies the STATE_DELTA patches itself; then a second client of the same thread
  // (a reload: no state of its own) starts from what the first one ended with.
  async state() {
    const { agent, seen } = newAgent();
    agent.setState({ filters: { year_from: 2010, journal: 'Nature' }, view: 'list' });
    say(agent, 'Search again since 2020');
    await agent.runAgent();
    const afterRun = structuredClone(agent.state);
    const reloaded = new HttpAgent({ url, threadId: agent.threadId });
    const reseen = [];
    reloaded.subscribe({ onEvent: ({ event }) => { reseen.push(event); } });
    reloaded.setMessages(structuredClone(agent.messages));
    say(reloaded, 'Thanks');
    await reloaded.runAgent();
    return {
      ...summary(agent, seen),
      afterRun,
      threadId: agent.threadId,
      reloaded: { types: reseen.map((e) => e.type), events: reseen, state: reloaded.state },
    };
  },

  // Reasoning, text and a server tool over two model turns, then a second run on the thread.
  async stream() {
    const { agent, seen } = newAgent();
    say(agent, 'What is the weather in Paris?');
    agent.setState({ unit: 'celsius' });
    const first = await agent.runAgent();
    say(agent, 'Thanks');
    await agent.runAgent();
    return summary(agent, seen, { result: first.result });
  },

  // A frontend tool: the run stops at its call, the client runs it and starts the next run.
  async frontend() {
    const { agent, seen } = newAgent();
    const tools = [{
      name: 'pick_color',
      description: 'Ask the user to pick a colour in the page.',
      parameters: { type: 'object', properties: { hint: { type: 'string' } } },
    }];
    say(agent, 'Pick a colour for the theme');
    await agent.runAgent({ tools });
    const calls = agent.messages.flatMap((m) => m.toolCalls ?? []);
    const call = calls.find((c) => c.function.name === 'pick_color');
    const args = JSON.parse(call.function.arguments);
    agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: call.id, content: `"teal (${args.hint})"` });
    await agent.runAgent({ tools });
    return summary(agent, seen);
  },

  // A tool that needs approval: the run ends with an interrupt, the next run resumes it.
  async approval() {
    const { agent, seen } = newAgent();
    say(agent, 'Please refund both orders');
    await agent.runAgent();
    const interrupts = agent.pendingInterrupts.map((i) => ({ ...i }));
    const resume = interrupts.map((i) => ({
      interruptId: i.id, status: 'resolved', payload: { approved: process.env.APPROVE === '1', reason: 'too much' },
    }));
    await agent.runAgent({ resume });
    return summary(agent, seen, { interrupts });
  },

  // An image as AG-UI 1.0 content (base64 data in IMAGE_BASE64), then a later run on the
  // thread that sends text only.
  async image() {
    const { agent, seen } = newAgent();
    agent.addMessage({
      id: randomUUID(),
      role: 'user',
      content: [
        { type: 'text', text: 'What does this error say?' },
        {
          type: 'image',
          source: { type: 'data', value: process.env.IMAGE_BASE64, mimeType: 'image/png' },
          metadata: { filename: 'error.png' },
        },
      ],
    });
    await agent.runAgent();
    say(agent, 'And now?');
    await agent.runAgent();
    return summary(agent, seen);
  },

  // The user stops the answer: abortRun() while text streams.
  async abort() {
    const { agent, seen } = newAgent();
    say(agent, 'Tell me a slow story');
    let aborted = false;
    agent.subscribe({
      onTextMessageContentEvent: () => {
        if (!aborted) { aborted = true; agent.abortRun(); }
      },
    });
    let error = null;
    try {
      await agent.runAgent({ forwardedProps: JSON.parse(process.env.FORWARDED_PROPS ?? '{}') });
    } catch (e) {
      error = String(e?.name ?? e);
    }
    return summary(agent, seen, { aborted, error });
  },

  // A follower: the run's stream on another worker (FOLLOW_URL, the run's
  // /api/runs/{id}/stream), read by the unchanged client through a GET instead of its POST
  // (a run taken over from a worker that died, in the takeover tests).
  async follow() {
    class Follower extends HttpAgent {
      requestInit() {
        return { method: 'GET', headers: { Accept: 'text/event-stream' } };
      }
    }
    const agent = new Follower({ url: process.env.FOLLOW_URL, threadId: process.env.THREAD_ID });
    const seen = [];
    agent.subscribe({ onEvent: ({ event }) => { seen.push(event); } });
    await agent.runAgent({ runId: process.env.RUN_ID });
    return summary(agent, seen);
  },
};

const result = await scenarios[scenario]();
process.stdout.write(JSON.stringify(result));
