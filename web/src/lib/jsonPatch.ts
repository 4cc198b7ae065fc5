/**
 * JSON Patch (RFC 6902), applied the way the server applies it (`agentstream.state`): to a
 * copy, whole or not at all. The tray keeps the shared state it shows the host page with it.
 */
import type { JsonPatchOperation } from "./events";

/** A patch that does not apply to the state (a path gone, a `test` that fails). */
export class PatchConflict extends Error {
  override name = "PatchConflict";
}

type Json = unknown;

/** `state` with `patch` applied, as a new object (`state` is left as it was). */
export function applyPatch(state: Record<string, unknown>, patch: readonly JsonPatchOperation[]): Record<string, unknown> {
  let doc: Json = structuredClone(state);
  patch.forEach((op, position) => {
    try {
      doc = applyOne(doc, op);
    } catch (error) {
      if (error instanceof PatchConflict) throw new PatchConflict(`operation ${position} (${op.op}): ${error.message}`);
      throw error;
    }
  });
  if (!isObject(doc)) throw new PatchConflict("the patch replaces the state with something other than an object");
  return doc;
}

function applyOne(doc: Json, op: JsonPatchOperation): Json {
  switch (op.op) {
    case "add":
      return add(doc, op.path, structuredClone(valueOf(op)));
    case "remove":
      return remove(doc, op.path)[0];
    case "replace":
      return add(remove(doc, op.path)[0], op.path, structuredClone(valueOf(op)));
    case "move": {
      const from = fromOf(op);
      if (op.path.startsWith(`${from}/`)) throw new PatchConflict("a value cannot move into itself");
      const [rest, value] = remove(doc, from);
      return add(rest, op.path, value);
    }
    case "copy":
      return add(doc, op.path, structuredClone(get(doc, fromOf(op))));
    case "test":
      if (!same(get(doc, op.path), valueOf(op))) throw new PatchConflict(`${op.path} does not hold the value tested`);
      return doc;
    default:
      throw new PatchConflict(`unknown operation ${JSON.stringify((op as { op: unknown }).op)}`);
  }
}

function valueOf(op: JsonPatchOperation): Json {
  if (!("value" in op)) throw new PatchConflict("value is missing");
  return op.value;
}

function fromOf(op: JsonPatchOperation): string {
  if (typeof op.from !== "string") throw new PatchConflict("from must be a JSON Pointer");
  return op.from;
}

function tokens(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new PatchConflict(`${JSON.stringify(path)} is not a JSON Pointer`);
  return path.slice(1).split("/").map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function index(list: Json[], token: string, endOk: boolean): number {
  if (endOk && token === "-") return list.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchConflict(`${JSON.stringify(token)} is not an array index`);
  const at = Number(token);
  if (at > list.length || (at === list.length && !endOk)) throw new PatchConflict(`index ${at} is past the array's end`);
  return at;
}

function parent(doc: Json, path: string[]): Json {
  let node = doc;
  for (const token of path) {
    if (Array.isArray(node)) node = node[index(node, token, false)];
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
    else throw new PatchConflict(`/${path.join("/")} does not exist`);
  }
  return node;
}

function get(doc: Json, path: string): Json {
  const parts = tokens(path);
  if (parts.length === 0) return doc;
  const holder = parent(doc, parts.slice(0, -1));
  const last = parts[parts.length - 1]!;
  if (Array.isArray(holder)) return holder[index(holder, last, false)];
  if (isObject(holder) && Object.hasOwn(holder, last)) return holder[last];
  throw new PatchConflict(`${path} does not exist`);
}

function add(doc: Json, path: string, value: Json): Json {
  const parts = tokens(path);
  if (parts.length === 0) return value;
  const holder = parent(doc, parts.slice(0, -1));
  const last = parts[parts.length - 1]!;
  if (Array.isArray(holder)) holder.splice(index(holder, last, true), 0, value);
  // (defined, not assigned: a key "__proto__" is a key like any other, not the prototype)
  else if (isObject(holder)) Object.defineProperty(holder, last, { value, writable: true, enumerable: true, configurable: true });
  else throw new PatchConflict(`${path} is inside a value that is not an object or array`);
  return doc;
}

function remove(doc: Json, path: string): [Json, Json] {
  const parts = tokens(path);
  if (parts.length === 0) return [null, doc];
  const holder = parent(doc, parts.slice(0, -1));
  const last = parts[parts.length - 1]!;
  if (Array.isArray(holder)) return [doc, holder.splice(index(holder, last, false), 1)[0]];
  if (isObject(holder) && Object.hasOwn(holder, last)) {
    const value = holder[last];
    delete holder[last];
    return [doc, value];
  }
  throw new PatchConflict(`${path} does not exist`);
}

function same(a: Json, b: Json): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
