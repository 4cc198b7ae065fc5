/**
 * Files sent with a message: the upload (`POST /api/attachments`, with progress), reading one
 * back (`GET /api/attachments/{id}`, as a blob, so a bearer token goes along where an `<img
 * src>` could not carry it), and what the chat offers (kinds, sizes). A message refers to its
 * files by id; the server sniffs each file's type from its content, so the type shown is the
 * server's, never the name's.
 */
import { fetcher, httpError, type StreamOptions } from "./stream";
import { UPLOAD_PROGRESS, type ProgressInit } from "./transport";

/** A stored file, as the server describes it. */
export interface AttachmentInfo {
  id: string;
  name: string;
  media_type: string;
  size: number;
  sha256?: string;
}

export type AttachmentKind = "image" | "pdf" | "text";

export const ATTACHMENT_KINDS: readonly AttachmentKind[] = ["image", "pdf", "text"];

/** What the chat takes, from the server's configuration and the page around it. */
export interface AttachmentPolicy {
  kinds: AttachmentKind[];
  /** Bytes per file. */
  maxBytes: number;
  maxFiles: number;
}

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"]);
const TEXT_EXTENSIONS =
  /\.(txt|text|md|markdown|csv|tsv|json|jsonl|log|ya?ml|toml|ini|xml|html?|css|js|mjs|ts|tsx|jsx|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|php|sh|sql|swift|r|scala|lua|pl)$/i;

/** The kind a media type (or, for a file not uploaded yet, its name) suggests; `null` for
 * anything the server would refuse. The server decides from the content. */
export function kindOf(mediaType: string, name = ""): AttachmentKind | null {
  const type = mediaType.split(";")[0]!.trim().toLowerCase();
  if (IMAGE_TYPES.has(type)) return "image";
  if (type === "application/pdf") return "pdf";
  if (type.startsWith("text/") || type === "application/json" || TEXT_EXTENSIONS.test(name)) return "text";
  if (type === "" || type === "application/octet-stream") {
    if (/\.pdf$/i.test(name)) return "pdf";
    if (/\.(png|jpe?g|webp|gif)$/i.test(name)) return "image";
  }
  return null;
}

/** Only raster images are shown as pictures; anything else is a chip that downloads. */
export function isImage(info: Pick<AttachmentInfo, "media_type">): boolean {
  return kindOf(info.media_type) === "image";
}

/** The file picker's `accept` for `kinds`. */
export function acceptFor(kinds: readonly AttachmentKind[]): string {
  const parts: string[] = [];
  if (kinds.includes("image")) parts.push("image/png,image/jpeg,image/webp,image/gif");
  if (kinds.includes("pdf")) parts.push("application/pdf,.pdf");
  if (kinds.includes("text")) parts.push("text/*,application/json,.md,.csv,.json,.py,.ts,.js,.yaml,.yml,.toml,.sql,.sh");
  return parts.join(",");
}

/** `kinds` as a page writes them (`"image,pdf"`, `"off"`), keeping only known kinds; `null`
 * when nothing is said. */
export function parseKinds(text: string | null | undefined): AttachmentKind[] | null {
  if (text === null || text === undefined || text.trim() === "") return null;
  if (/^(off|none|false)$/i.test(text.trim())) return [];
  const wanted = text.split(/[\s,]+/).map((k) => k.trim().toLowerCase());
  return ATTACHMENT_KINDS.filter((k) => wanted.includes(k));
}

/** Why `file` cannot be attached under `policy`, or `null`. Checked before uploading so the
 * user hears at once; the server checks again. */
export function refusal(file: { name: string; type: string; size: number }, policy: AttachmentPolicy): string | null {
  const kind = kindOf(file.type, file.name);
  if (kind === null || !policy.kinds.includes(kind)) {
    return `${file.name}: this chat takes ${describeKinds(policy.kinds)}`;
  }
  if (file.size > policy.maxBytes) return `${file.name} is ${formatBytes(file.size)}; files may be up to ${formatBytes(policy.maxBytes)}`;
  return null;
}

export function describeKinds(kinds: readonly AttachmentKind[]): string {
  const names = kinds.map((k) => ({ image: "images", pdf: "PDFs", text: "text files" })[k]);
  if (names.length === 0) return "no files";
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

// --- the API ------------------------------------------------------------------------------

export interface UploadOptions extends StreamOptions {
  onProgress?(fraction: number): void;
}

/** Upload `file`; resolves to the stored file. Refusals (too large, a type the server does
 * not take, a file whose content is not what it claims) are {@link StreamHttpError}s with
 * the server's reason. */
export async function uploadAttachment(file: Blob & { name?: string }, options: UploadOptions = {}): Promise<AttachmentInfo> {
  const form = new FormData();
  form.append("file", file, file.name ?? "file");
  const init: ProgressInit = {
    method: "POST",
    body: form,
    credentials: options.credentials ?? "same-origin",
    headers: { Accept: "application/json", ...(options.headers ?? {}) },
    signal: options.signal,
  };
  if (options.onProgress) init[UPLOAD_PROGRESS] = options.onProgress;
  const response = await fetcher(options)(`${options.baseUrl ?? ""}/api/attachments`, init);
  if (!response.ok) throw await httpError(response);
  return (await response.json()) as AttachmentInfo;
}

/** A stored file's content, read as its owner. */
export async function fetchAttachment(id: string, options: StreamOptions = {}): Promise<Blob> {
  const response = await fetcher(options)(`${options.baseUrl ?? ""}/api/attachments/${encodeURIComponent(id)}`, {
    credentials: options.credentials ?? "same-origin",
    signal: options.signal,
    headers: options.headers,
  });
  if (!response.ok) throw await httpError(response);
  return response.blob();
}
