/**
 * The files waiting in the composer: each is uploaded as soon as it is added (so a large one
 * is on its way while the user types), with its progress, and can be removed (which cancels
 * its upload). A file the chat does not take is refused at once, with the reason, before any
 * byte is sent; the server checks everything again and its refusal is shown the same way.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import {
  isImage,
  refusal,
  uploadAttachment,
  type AttachmentInfo,
  type AttachmentPolicy,
} from "../lib/attachments";
import type { StreamOptions } from "../lib/stream";

export interface PendingFile {
  key: string;
  name: string;
  size: number;
  /** A local picture of an image, before and after its upload. */
  preview: string | null;
  /** From 0 to 1 while uploading; `null` when the transport does not say. */
  progress: number | null;
  status: "uploading" | "ready" | "failed";
  info?: AttachmentInfo;
  error?: string;
}

export interface PendingAttachments {
  files: PendingFile[];
  /** Why the last files added were not taken, for the user. */
  notice: string | null;
  /** Some file is still uploading: the message waits for it. */
  uploading: boolean;
  add(files: readonly File[]): void;
  remove(key: string): void;
  /** The uploaded files, for the message being sent; the composer is emptied. */
  take(): AttachmentInfo[];
}

let counter = 0;

export function useAttachments(policy: AttachmentPolicy | null, connection: StreamOptions = {}): PendingAttachments {
  const [files, setFiles] = useState<PendingFile[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const filesRef = useRef(files);
  const uploads = useRef(new Map<string, AbortController>());
  const latest = useRef({ policy, connection });
  latest.current = { policy, connection };

  const update = useCallback((next: PendingFile[]) => {
    filesRef.current = next;
    setFiles(next);
  }, []);
  const change = useCallback(
    (key: string, patch: Partial<PendingFile>) =>
      update(filesRef.current.map((f) => (f.key === key ? { ...f, ...patch } : f))),
    [update],
  );

  const add = useCallback(
    (added: readonly File[]) => {
      const { policy, connection } = latest.current;
      if (!policy || !added.length) return;
      const refused: string[] = [];
      const taken: PendingFile[] = [];
      for (const file of added) {
        if (filesRef.current.length + taken.length >= policy.maxFiles) {
          refused.push(`A message may carry up to ${policy.maxFiles} files.`);
          break;
        }
        const why = refusal(file, policy);
        if (why) {
          refused.push(why);
          continue;
        }
        const key = `f${++counter}`;
        const controller = new AbortController();
        uploads.current.set(key, controller);
        taken.push({
          key,
          name: file.name || "file",
          size: file.size,
          preview: isImage({ media_type: file.type }) ? URL.createObjectURL(file) : null,
          progress: 0,
          status: "uploading",
        });
        uploadAttachment(file, {
          ...connection,
          signal: controller.signal,
          onProgress: (fraction) => change(key, { progress: fraction }),
        }).then(
          (info) => {
            uploads.current.delete(key);
            change(key, { status: "ready", progress: 1, info });
          },
          (error: unknown) => {
            uploads.current.delete(key);
            if (controller.signal.aborted) return;
            // A file refused for what it holds may not be a picture at all: no preview of it.
            const preview = filesRef.current.find((f) => f.key === key)?.preview;
            if (preview) URL.revokeObjectURL(preview);
            change(key, { status: "failed", progress: null, preview: null, error: reason(error) });
          },
        );
      }
      setNotice(refused.length ? refused.join(" ") : null);
      if (taken.length) update([...filesRef.current, ...taken]);
    },
    [change, update],
  );

  const remove = useCallback(
    (key: string) => {
      uploads.current.get(key)?.abort();
      uploads.current.delete(key);
      const gone = filesRef.current.find((f) => f.key === key);
      if (gone?.preview) URL.revokeObjectURL(gone.preview);
      update(filesRef.current.filter((f) => f.key !== key));
      setNotice(null);
    },
    [update],
  );

  const take = useCallback(() => {
    const ready = filesRef.current.flatMap((f) => (f.status === "ready" && f.info ? [f.info] : []));
    for (const f of filesRef.current) if (f.preview) URL.revokeObjectURL(f.preview);
    update([]);
    setNotice(null);
    return ready;
  }, [update]);

  // Leaving the page (or the tray) cancels what is still uploading.
  useEffect(() => () => uploads.current.forEach((controller) => controller.abort()), []);

  return { files, notice, uploading: files.some((f) => f.status === "uploading"), add, remove, take };
}

/** The server's reason (a 413 names its limit, a 415 what the file holds). */
function reason(error: unknown): string {
  return error instanceof Error && error.message ? error.message : "The file could not be uploaded.";
}
