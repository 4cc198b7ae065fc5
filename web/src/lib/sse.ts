/**
 * The `text/event-stream` format, incrementally: bytes-as-text in, complete messages out.
 */

export interface SSEMessage {
  /** The `event:` field, "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last event id seen so far (it carries over to later messages, as in browsers). */
  id?: string;
  /** Whether this message had an `id:` line of its own. A server that splits one event into
   * several frames puts the id on the last, so only such a message completes a position. */
  hasId: boolean;
}

/**
 * Incremental parser for the `text/event-stream` format (WHATWG HTML §9.2.6), minus `retry`.
 * Feed it text as it arrives; it returns the messages completed by that text.
 */
export class SSEParser {
  private buffer = "";
  private dataLines: string[] = [];
  private eventName = "";
  private lastId: string | undefined;
  private sawData = false;
  private sawId = false;

  push(chunk: string): SSEMessage[] {
    this.buffer += chunk;
    const out: SSEMessage[] = [];
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf("\r", start);
      const lf = this.buffer.indexOf("\n", start);
      if (cr === -1 && lf === -1) break;
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF split across chunks: wait.
        if (cr === this.buffer.length - 1) break;
        end = cr;
        next = this.buffer[cr + 1] === "\n" ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      const message = this.line(this.buffer.slice(start, end));
      if (message) out.push(message);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Call at end of stream: a final message without its blank line still counts. */
  flush(): SSEMessage[] {
    const out: SSEMessage[] = [];
    if (this.buffer.length > 0) {
      const rest = this.buffer.endsWith("\r") ? this.buffer.slice(0, -1) : this.buffer;
      this.buffer = "";
      const message = this.line(rest);
      if (message) out.push(message);
    }
    const message = this.line("");
    if (message) out.push(message);
    return out;
  }

  private line(line: string): SSEMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // comment, e.g. heartbeat `: ping`
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.dataLines.push(value);
        this.sawData = true;
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) {
          this.lastId = value;
          this.sawId = true;
        }
        break;
      default:
        break; // `retry` and unknown fields are ignored
    }
    return null;
  }

  private dispatch(): SSEMessage | null {
    const sawData = this.sawData;
    const message: SSEMessage = {
      event: this.eventName || "message",
      data: this.dataLines.join("\n"),
      hasId: this.sawId,
    };
    if (this.lastId !== undefined) message.id = this.lastId;
    this.dataLines = [];
    this.eventName = "";
    this.sawData = false;
    this.sawId = false;
    return sawData ? message : null;
  }
}
