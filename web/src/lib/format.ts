/** Small formatting helpers shared by the UI: tool inputs and outputs, counts. */

/** Pretty-print a tool input or output: strings as they are, everything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") {
    // Tool output often arrives as JSON text: show it indented like other values.
    const trimmed = value.trim();
    if ((trimmed.startsWith("{") && trimmed.endsWith("}")) || (trimmed.startsWith("[") && trimmed.endsWith("]"))) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat("en").format(n);
}
