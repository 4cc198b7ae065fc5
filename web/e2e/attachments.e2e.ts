/**
 * Files in the conversation, in headless Chromium against the real server: an image pasted
 * into the standalone UI's composer is uploaded with its progress, sent, drawn in the user's
 * bubble (larger on a click) and drawn again after a reload; a file that lies about its type
 * is refused with the server's reason and can be removed; a PDF dropped on the embedded tray
 * is sent as a chip; a host page that allows only images gets no PDF through.
 * Screenshots: test-results/screenshots/attachments-*.png.
 */
import { crc32, deflateSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startTrayHost, type RunningServer, type TrayHost } from "./harness";

let tray: TrayHost;
let server: RunningServer;
let browser: Browser;

/** A real PNG (a colour gradient with a dark band), so the picture in the bubble is seen. */
function png(width: number, height: number): Buffer {
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      const band = y > height * 0.4 && y < height * 0.6;
      rows[row + 1 + x * 3] = band ? 40 : Math.round((255 * x) / width);
      rows[row + 2 + x * 3] = band ? 40 : 120;
      rows[row + 3 + x * 3] = band ? 40 : Math.round((255 * y) / height);
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n" +
    "trailer<</Root 1 0 R>>\n%%EOF\n",
);

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  tray = await startTrayHost(
    (api) =>
      `<h1>Host page</h1><agentstream-chat endpoint="${api}" mode="docked" open></agentstream-chat>` +
      `<agentstream-chat id="images-only" endpoint="${api}" mode="inline" attachments="image" style="display:none"></agentstream-chat>`,
  );
  server = tray.server;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await tray?.stop();
});

async function newPage(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(url);
  return page;
}

/** Pastes `files` into the focused composer, as the clipboard would. */
async function paste(page: Page, files: { name: string; type: string; base64: string }[]): Promise<void> {
  await page.getByRole("textbox", { name: "Message" }).evaluate((box, files) => {
    const data = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], f.name, { type: f.type }));
    }
    box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, files);
}

/** Whether every image in `scope` has loaded a picture. */
function imagesLoaded(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((selector) => {
    const images = Array.from(document.querySelectorAll<HTMLImageElement>(selector));
    return images.length > 0 && images.every((img) => img.complete && img.naturalWidth > 0);
  }, selector);
}

describe("files in the standalone UI", () => {
  it("sends a pasted image, shows it larger on a click, and again after a reload", async () => {
    const page = await newPage(server.url);
    await paste(page, [{ name: "error-page.png", type: "image/png", base64: png(480, 300).toString("base64") }]);
    const pending = page.getByTestId("pending-attachment");
    await expect.poll(() => pending.getAttribute("class")).toContain("ready");
    await page.getByRole("textbox", { name: "Message" }).fill("hello, what does this screenshot show?");
    await screenshot(page, "attachments-01-pasted");
    await page.getByRole("textbox", { name: "Message" }).press("Enter");

    const bubble = page.getByTestId("user-message").last();
    await bubble.getByRole("button", { name: "Open error-page.png" }).waitFor();
    await expect.poll(() => imagesLoaded(page, '[data-testid="user-message"] img')).toBe(true);
    await page.getByTestId("assistant-message").last().getByText("Here is").first().waitFor();
    expect(await pending.count()).toBe(0); // the composer is empty again
    await screenshot(page, "attachments-02-sent");

    await bubble.getByRole("button", { name: "Open error-page.png" }).click();
    const viewer = page.getByRole("dialog", { name: "error-page.png" });
    await viewer.waitFor();
    await expect.poll(() => imagesLoaded(page, "dialog.image-viewer img")).toBe(true);
    await screenshot(page, "attachments-03-viewer");
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "hidden" });

    await page.waitForURL(/\/c\//);
    await page.reload();
    await page.getByTestId("user-message").getByRole("button", { name: "Open error-page.png" }).waitFor();
    await expect.poll(() => imagesLoaded(page, '[data-testid="user-message"] img')).toBe(true);
    await page.context().close();
  });

  it("shows a slow upload's progress, and removing the file cancels it", async () => {
    const page = await newPage(server.url);
    const network = await page.context().newCDPSession(page);
    await network.send("Network.enable");
    // 256 KB/s up: a 1.5 MB image takes about six seconds.
    await network.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 256 * 1024,
    });
    const noise = Buffer.alloc(1_500_000);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
    await page.getByTestId("file-input").setInputFiles([{ name: "large.png", mimeType: "image/png", buffer: Buffer.concat([png(64, 64), noise]) }]);
    const bar = page.getByRole("progressbar", { name: "Uploading large.png" });
    await expect.poll(async () => Number((await bar.getAttribute("value")) ?? 0)).toBeGreaterThan(0.05);
    expect(Number(await bar.getAttribute("value"))).toBeLessThan(1);
    expect(await page.getByRole("button", { name: "Send message" }).isDisabled()).toBe(true); // waits for its files
    await screenshot(page, "attachments-00-uploading");
    await page.getByRole("button", { name: "Remove large.png" }).click();
    expect(await page.getByTestId("pending-attachment").count()).toBe(0);
    await page.context().close();
  });

  it("refuses a file that lies about its type, with the server's reason, and lets it be removed", async () => {
    const page = await newPage(server.url);
    const html = Buffer.from("<!doctype html><script>alert(1)</script>").toString("base64");
    await page.getByTestId("file-input").setInputFiles([
      { name: "photo.png", mimeType: "image/png", buffer: Buffer.from(html, "base64") },
      { name: "notes.csv", mimeType: "text/csv", buffer: Buffer.from("region,growth\nnorth,4\n") },
    ]);
    const lying = page.getByTestId("pending-attachment").filter({ hasText: "photo.png" });
    await expect.poll(() => lying.getAttribute("class")).toContain("failed");
    await expect.poll(() => lying.getByRole("alert").textContent()).toBe("HTML, SVG and XML files are not accepted");
    const csv = page.getByTestId("pending-attachment").filter({ hasText: "notes.csv" });
    await expect.poll(() => csv.getAttribute("class")).toContain("ready");
    await screenshot(page, "attachments-04-refused");

    await lying.getByRole("button", { name: "Remove photo.png" }).click();
    expect(await page.getByTestId("pending-attachment").count()).toBe(1);
    // A message of files alone is sent.
    await page.getByRole("button", { name: "Send message" }).click();
    const chip = page.getByTestId("user-message").last().getByRole("button", { name: /notes\.csv/ });
    await chip.waitFor();
    expect(await chip.textContent()).toContain("22 B");
    await page.context().close();
  });
});

describe("files a tool made", () => {
  it("shows a tool's chart in its card, live and after a reload", async () => {
    const page = await newPage(server.url);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("draw the revenue chart");
    await box.press("Enter");
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByText("Here is the revenue chart.").waitFor();
    const card = answer.getByTestId("tool-card");
    await card.getByRole("button", { name: "Open revenue.png" }).waitFor();
    await expect.poll(() => imagesLoaded(page, '[data-testid="tool-card"] img')).toBe(true);
    await screenshot(page, "attachments-07-tool-chart");
    await page.waitForURL(/\/c\//);
    await page.reload();
    await page.getByTestId("tool-card").getByRole("button", { name: "Open revenue.png" }).waitFor();
    await expect.poll(() => imagesLoaded(page, '[data-testid="tool-card"] img')).toBe(true);
    await page.context().close();
  });
});

describe("files in the embedded tray", () => {
  it("takes a PDF dropped on it and sends it as a chip", async () => {
    const page = await newPage(tray.url);
    const tray0 = page.locator("agentstream-chat").first();
    await tray0.getByRole("textbox", { name: "Message" }).waitFor();
    await tray0.locator(".scroll").evaluate((area, base64) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], "findings.pdf", { type: "application/pdf" }));
      for (const type of ["dragenter", "dragover", "drop"]) {
        area.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true, composed: true }));
      }
    }, PDF.toString("base64"));
    const pending = tray0.getByTestId("pending-attachment");
    await expect.poll(() => pending.getAttribute("class")).toContain("ready");
    await tray0.getByRole("textbox", { name: "Message" }).fill("hello, summarize this");
    await screenshot(page, "attachments-05-tray-dropped");
    await tray0.getByRole("textbox", { name: "Message" }).press("Enter");
    await tray0.getByTestId("user-message").last().getByRole("button", { name: /findings\.pdf/ }).waitFor();
    await screenshot(page, "attachments-06-tray-sent");
    await page.context().close();
  });

  it("lets the host page allow images only", async () => {
    const page = await newPage(tray.url);
    const only = page.locator("#images-only");
    await only.evaluate((el) => ((el as HTMLElement).style.display = "block"));
    await only.getByRole("button", { name: "Attach files" }).waitFor();
    expect(await only.getByTestId("file-input").getAttribute("accept")).toBe("image/png,image/jpeg,image/webp,image/gif");
    await only.getByTestId("file-input").setInputFiles([{ name: "report.pdf", mimeType: "application/pdf", buffer: PDF }]);
    await expect.poll(() => only.getByRole("alert").first().textContent()).toBe("report.pdf: this chat takes images");
    expect(await only.getByTestId("pending-attachment").count()).toBe(0);
    await only.evaluate((el) => el.setAttribute("attachments", "off"));
    await only.getByRole("button", { name: "Attach files" }).waitFor({ state: "detached" });
    await page.context().close();
  });
});
