import { describe, expect, it } from "vitest";
import { EMPTY_CONFIG } from "./config";
import { deleteConversation, getClientConfig, getConversation, listConversations, listModels, renameConversation } from "./api";
import { StreamHttpError } from "./stream";

function recordingFetch(answer: () => Response) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  const fetch = (async (url: string, init?: RequestInit) => {
    calls.push({ url: String(url), method: init?.method ?? "GET", body: init?.body ? JSON.parse(String(init.body)) : null });
    return answer();
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

describe("api", () => {
  it("pages conversations with limit and cursor", async () => {
    const { fetch, calls } = recordingFetch(() => json({ items: [{ id: "c1", title: "T" }], next_cursor: "n2" }));
    const page = await listConversations({ limit: 20, cursor: "a b" }, { fetch });
    expect(page.next_cursor).toBe("n2");
    expect(calls[0]?.url).toBe("/api/conversations?limit=20&cursor=a+b");
  });

  it("renames with PATCH {title}, deletes with DELETE (204), escapes ids", async () => {
    const { fetch, calls } = recordingFetch(() => json({ id: "c/1", title: "New" }));
    await renameConversation("c/1", "New", { fetch });
    expect(calls[0]).toEqual({ url: "/api/conversations/c%2F1", method: "PATCH", body: { title: "New" } });
    const del = recordingFetch(() => new Response(null, { status: 204 }));
    await expect(deleteConversation("c1", { fetch: del.fetch })).resolves.toBeUndefined();
    expect(del.calls[0]?.method).toBe("DELETE");
  });

  it("reports the server's reason for a failure", async () => {
    const { fetch } = recordingFetch(() => json({ detail: "Conversation not found" }, 404));
    const err = await getConversation("nope", { fetch }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamHttpError);
    expect(err).toMatchObject({ status: 404, message: "Conversation not found" });
  });

  it("reads the model list, tolerating an empty answer", async () => {
    const models = [{ id: "scripted:x", name: "x", provider: "scripted", default: true }];
    expect(await listModels({ fetch: recordingFetch(() => json({ models })).fetch })).toEqual(models);
    expect(await listModels({ fetch: recordingFetch(() => json({})).fetch })).toEqual([]);
  });

  it("reads the client config and keeps only well-formed parts", async () => {
    const types = { plan: { name: "plan", title: "Plan", view: null, actions: [] } };
    const good = recordingFetch(() => json({ app_name: "Planner", starter_prompts: ["Plan it", " ", 3], payload_types: types }));
    await expect(getClientConfig({ fetch: good.fetch })).resolves.toEqual({
      ...EMPTY_CONFIG,
      app_name: "Planner",
      starter_prompts: ["Plan it"],
      payload_types: types,
    });
    expect(good.calls[0]?.url).toBe("/api/chat/config");
    const odd = recordingFetch(() => json({ app_name: "", starter_prompts: "x", payload_types: null }));
    await expect(getClientConfig({ fetch: odd.fetch })).resolves.toEqual(EMPTY_CONFIG);
    const missing = recordingFetch(() => json({ detail: "Not Found" }, 404));
    await expect(getClientConfig({ fetch: missing.fetch })).rejects.toBeInstanceOf(StreamHttpError);
  });
});
