/**
 * The chat clients' default fetch: the browser's, except that a request asking for upload
 * progress goes through XMLHttpRequest, the only browser API that reports it. Every client
 * (stream, REST, uploads) and every wrapper of fetch (a bearer token's) goes through it, so
 * there is one transport, and a page that brings its own fetch keeps working (without
 * progress).
 */

/** Asks the default transport to report upload progress (a fraction from 0 to 1). Wrappers
 * of fetch (a bearer token's) pass it through untouched; a fetch of the page's own ignores
 * it, and the upload then shows no fraction. */
export const UPLOAD_PROGRESS = Symbol("agentstream.uploadProgress");

export type ProgressInit = RequestInit & { [UPLOAD_PROGRESS]?: (fraction: number) => void };

/** The default fetch (see above). */
export const progressFetch: typeof fetch = (input, init) => {
  const onProgress = (init as ProgressInit | undefined)?.[UPLOAD_PROGRESS];
  if (!onProgress || typeof XMLHttpRequest === "undefined") return globalThis.fetch(input, init);
  return new Promise<Response>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(init?.method ?? "GET", input instanceof Request ? input.url : String(input));
    xhr.responseType = "blob";
    xhr.withCredentials = init?.credentials === "include";
    new Headers(init?.headers).forEach((value, key) => xhr.setRequestHeader(key, value));
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () =>
      resolve(new Response(xhr.status === 204 ? null : xhr.response, { status: xhr.status, headers: responseHeaders(xhr) }));
    xhr.onerror = () => reject(new TypeError("Failed to fetch"));
    const signal = init?.signal;
    if (signal) {
      if (signal.aborted) return reject(new DOMException("The upload was cancelled", "AbortError"));
      signal.addEventListener("abort", () => {
        xhr.abort();
        reject(new DOMException("The upload was cancelled", "AbortError"));
      });
    }
    xhr.send(init?.body as XMLHttpRequestBodyInit | null | undefined);
  });
};

function responseHeaders(xhr: XMLHttpRequest): Headers {
  const headers = new Headers();
  for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
    const at = line.indexOf(":");
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}
