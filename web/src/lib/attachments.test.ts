import { describe, expect, it } from "vitest";
import { itemsFromMessages, requestOf } from "../chat/model";
import { acceptFor, describeKinds, formatBytes, kindOf, parseKinds, refusal, type AttachmentPolicy } from "./attachments";
import { attachmentsAllowed, normalizeConfig } from "./config";

const POLICY: AttachmentPolicy = { kinds: ["image", "pdf"], maxBytes: 1024 * 1024, maxFiles: 3 };

describe("attachments", () => {
  it("tells a file's kind by its type, or by its name when the browser gave none", () => {
    expect(kindOf("image/png")).toBe("image");
    expect(kindOf("application/pdf")).toBe("pdf");
    expect(kindOf("text/csv")).toBe("text");
    expect(kindOf("", "notes.md")).toBe("text");
    expect(kindOf("", "scan.PDF")).toBe("pdf");
    expect(kindOf("image/svg+xml", "logo.svg")).toBeNull(); // never drawn: it could run script
    expect(kindOf("application/zip", "a.zip")).toBeNull();
  });

  it("refuses at once what the chat does not take, saying what it takes", () => {
    expect(refusal({ name: "a.png", type: "image/png", size: 10 }, POLICY)).toBeNull();
    expect(refusal({ name: "a.csv", type: "text/csv", size: 10 }, POLICY)).toBe("a.csv: this chat takes images and PDFs");
    expect(refusal({ name: "big.pdf", type: "application/pdf", size: 3 * 1024 * 1024 }, POLICY)).toBe(
      "big.pdf is 3.0 MB; files may be up to 1.0 MB",
    );
  });

  it("reads the kinds a page allows", () => {
    expect(parseKinds(null)).toBeNull();
    expect(parseKinds("off")).toEqual([]);
    expect(parseKinds("pdf, image  nonsense")).toEqual(["image", "pdf"]);
    expect(acceptFor(["pdf"])).toBe("application/pdf,.pdf");
    expect(describeKinds(["image", "pdf", "text"])).toBe("images, PDFs and text files");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(2048)).toBe("2.0 KB");
  });

  it("takes the server's policy, narrowed by the page, and none from a server without it", () => {
    expect(normalizeConfig({}).attachments).toBeNull();
    const config = normalizeConfig({
      attachments: { kinds: ["image", "pdf", "text", "video"], max_bytes: 100, max_files: 2 },
    } as never);
    expect(config.attachments).toEqual({ kinds: ["image", "pdf", "text"], maxBytes: 100, maxFiles: 2 });
    expect(attachmentsAllowed(config)?.kinds).toEqual(["image", "pdf", "text"]);
    expect(attachmentsAllowed(config, ["image"])?.kinds).toEqual(["image"]);
    expect(attachmentsAllowed(config, [])).toBeNull();
  });

  it("keeps a stored message's files, and a retry sends them again", () => {
    const file = { id: "f1", name: "shot.png", media_type: "image/png", size: 10 };
    const items = itemsFromMessages([
      { id: "u1", role: "user", content: "what is this?", attachments: [file] },
      { id: "a1", role: "assistant", content: "", status: "failed" },
    ]);
    const [user, answer] = items;
    expect(user).toMatchObject({ kind: "user", attachments: [file] });
    expect(answer?.kind === "assistant" && answer.request).toEqual({ message: "what is this?", attachments: ["f1"] });
    expect(requestOf({ kind: "user", id: "u", text: "hi" })).toEqual({ message: "hi" });
  });
});
