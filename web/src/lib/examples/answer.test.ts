import { describe, expect, it } from "vitest";
import { answer } from "./answer";

function serverSaying(frames: object[]): typeof fetch {
  const body = frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("");
  return (async () =>
    new Response(body, { headers: { "Content-Type": "text/event-stream" } })) as typeof fetch;
}

describe("the docs' stream client example", () => {
  it("shows the text as it grows and returns the final answer", async () => {
    const shown: string[] = [];
    const fetch = serverSaying([
      { type: "status", message: "Thinking...", run_id: "r1" },
      { type: "text_delta", text: "Billing " },
      { type: "tool_start", tool: "check_service", input: {}, tool_use_id: "c1" },
      { type: "text_delta", text: "is slow." },
      { type: "complete", payload: { message: "Billing is slow.", suggested_values: [] } },
    ]);
    const final = await answer("Is billing up?", (text) => shown.push(text), { fetch });
    expect(final.message).toBe("Billing is slow.");
    expect(shown).toEqual(["Billing ", "Billing \n(check_service…)", "Billing is slow."]);
  });

  it("turns an error event into an exception", async () => {
    const fetch = serverSaying([{ type: "error", message: "The model is overloaded." }]);
    await expect(answer("hi", () => undefined, { fetch })).rejects.toThrow("overloaded");
  });
});
