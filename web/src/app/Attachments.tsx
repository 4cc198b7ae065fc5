/**
 * Files in the chat: those waiting in the composer (a thumbnail or a chip each, with its
 * upload's progress and a remove button) and those a message carried (images that open
 * larger, other files as a chip that downloads them). Stored files are read through the
 * chat's connection, as blobs, so a bearer token reaches them where an `<img src>` could
 * not; only raster images are ever drawn, and nothing a file holds runs in the page.
 */
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import { fetchAttachment, formatBytes, isImage, type AttachmentInfo } from "../lib/attachments";
import type { StreamOptions } from "../lib/stream";
import { FileIcon, XIcon } from "./icons";
import type { PendingFile } from "./useAttachments";

/** Reads stored files for the messages below it (one cache per connection). */
export interface AttachmentLoader {
  url(id: string): Promise<string>;
}

export function attachmentLoader(connection: StreamOptions): AttachmentLoader {
  const urls = new Map<string, Promise<string>>();
  return {
    url(id) {
      let found = urls.get(id);
      if (!found) {
        found = fetchAttachment(id, connection).then((blob) => URL.createObjectURL(blob));
        found.catch(() => urls.delete(id)); // tried again next time it is shown
        urls.set(id, found);
      }
      return found;
    },
  };
}

export const AttachmentLoaderContext = createContext<AttachmentLoader>(attachmentLoader({}));

/** The object URL of a stored file, once read (`null` before; `"error"` if it could not be). */
function useStoredUrl(id: string): string | null {
  const loader = useContext(AttachmentLoaderContext);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loader.url(id).then(
      (u) => live && setUrl(u),
      () => live && setUrl("error"),
    );
    return () => {
      live = false;
    };
  }, [loader, id]);
  return url;
}

/** The files of a sent message, above its text. */
export function MessageAttachments({ attachments }: { attachments: AttachmentInfo[] }) {
  const [open, setOpen] = useState<AttachmentInfo | null>(null);
  return (
    <div class="attachments sent" data-testid="message-attachments">
      {attachments.map((a) =>
        isImage(a) ? (
          <StoredImage key={a.id} attachment={a} onOpen={() => setOpen(a)} />
        ) : (
          <StoredFile key={a.id} attachment={a} />
        ),
      )}
      {open && <ImageViewer attachment={open} onClose={() => setOpen(null)} />}
    </div>
  );
}

function StoredImage({ attachment, onOpen }: { attachment: AttachmentInfo; onOpen(): void }) {
  const url = useStoredUrl(attachment.id);
  return (
    <button type="button" class="attachment-thumb" aria-label={`Open ${attachment.name}`} title={attachment.name} onClick={onOpen}>
      {url && url !== "error" ? (
        <img src={url} alt={attachment.name} />
      ) : (
        <span class="attachment-placeholder">{url === "error" ? "Not available" : "…"}</span>
      )}
    </button>
  );
}

function StoredFile({ attachment }: { attachment: AttachmentInfo }) {
  const loader = useContext(AttachmentLoaderContext);
  const [failed, setFailed] = useState(false);
  const download = async () => {
    try {
      const url = await loader.url(attachment.id);
      const link = document.createElement("a");
      link.href = url;
      link.download = attachment.name;
      link.rel = "noopener";
      link.click();
      setFailed(false);
    } catch {
      setFailed(true);
    }
  };
  return (
    <button
      type="button"
      class="attachment-chip"
      title={failed ? "Could not be downloaded" : `Download ${attachment.name}`}
      onClick={() => void download()}
    >
      <FileIcon />
      <span class="attachment-name">{attachment.name}</span>
      <span class="attachment-size">{formatBytes(attachment.size)}</span>
    </button>
  );
}

/** An image at its full size, over the chat; Escape or a click outside closes it. */
function ImageViewer({ attachment, onClose }: { attachment: AttachmentInfo; onClose(): void }) {
  const url = useStoredUrl(attachment.id);
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      class="image-viewer"
      aria-label={attachment.name}
      onClose={onClose}
      onClick={(e) => e.target === ref.current && ref.current?.close()}
    >
      <div class="image-viewer-bar">
        <span class="attachment-name">{attachment.name}</span>
        <button type="button" class="icon-btn" aria-label="Close" onClick={() => ref.current?.close()}>
          <XIcon />
        </button>
      </div>
      {url && url !== "error" && <img src={url} alt={attachment.name} />}
    </dialog>
  );
}

/** The files waiting in the composer. */
export function PendingList({ files, onRemove }: { files: PendingFile[]; onRemove(key: string): void }) {
  if (!files.length) return null;
  return (
    <ul class="attachments pending" aria-label="Attached files">
      {files.map((f) => (
        <li key={f.key} class={`pending-file ${f.status}`} data-testid="pending-attachment" title={f.error ?? f.name}>
          {f.preview ? <img src={f.preview} alt="" class="pending-preview" /> : <FileIcon />}
          <span class="attachment-name">{f.name}</span>
          <span class="attachment-size">{f.status === "failed" ? "Not attached" : formatBytes(f.size)}</span>
          {f.status === "uploading" && (
            <progress
              class="upload-progress"
              aria-label={`Uploading ${f.name}`}
              max={1}
              {...(f.progress === null ? {} : { value: f.progress })}
            />
          )}
          <button type="button" class="remove-file" aria-label={`Remove ${f.name}`} onClick={() => onRemove(f.key)}>
            <XIcon />
          </button>
          {f.error && (
            <span class="pending-error" role="alert">
              {f.error}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
