// Ask the agent one question from your own front end, printing the answer as it streams.
import { startChat, type CompletePayload, type StreamOptions } from "../stream";

export async function answer(
  message: string,
  show: (text: string) => void,
  options: StreamOptions = {},
): Promise<CompletePayload> {
  const run = startChat({ message, conversation_id: null }, options);
  let text = "";
  for await (const event of run.events) {
    switch (event.type) {
      case "text_delta":
        text += event.text;
        show(text);
        break;
      case "tool_start":
        show(`${text}\n(${event.tool}…)`);
        break;
      case "complete":
        return event.payload; // message, suggestions, payloads, usage
      case "error":
        throw new Error(event.message);
      case "cancelled":
        throw new Error("stopped");
    }
  }
  throw new Error("the stream ended without an answer");
}
