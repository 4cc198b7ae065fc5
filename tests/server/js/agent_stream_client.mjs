// The ops agent protocol's example frontend handler, run verbatim in Node against a live server.
//
// Only what Node needs differs from the protocol's example: the URL is absolute (BASE_URL) and the
// session cookie is sent explicitly (a browser would attach it). The switch's comments are
// filled in to record what a UI would show; the result is printed as JSON for the test.
const BASE_URL = process.env.BASE_URL;
const COOKIE = process.env.SESSION_COOKIE;

const collected = { text: '', toolStarts: [], toolEnds: [], other: [], done: false, errors: [] };

const response = await fetch(new URL('/agent/stream', BASE_URL), {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Cookie: COOKIE },
  body: JSON.stringify({ message: "Check server status" })
});

const reader = response.body.getReader();
const decoder = new TextDecoder();
let buffer = '';

while (true) {
  const { done, value } = await reader.read();
  if (done) break;

  buffer += decoder.decode(value, { stream: true });
  const lines = buffer.split('\n');

  // Keep the last incomplete line in the buffer
  buffer = lines.pop() || '';

  for (const line of lines) {
    if (line.trim() === '') continue;

    if (line.startsWith('data: ')) {
      try {
        const data = JSON.parse(line.slice(6));

        switch (data.type) {
          case 'token':
            // Append data.content to UI
            collected.text += data.content;
            break;
          case 'tool_start':
            // Show tool indicator
            collected.toolStarts.push(data);
            break;
          case 'tool_end':
            // Show tool result or hide indicator
            collected.toolEnds.push(data);
            break;
          case 'done':
            // Stream finished
            collected.done = true;
            break;
          default:
            collected.other.push(data);
        }
      } catch (e) {
        console.error('Error parsing SSE data:', e);
        collected.errors.push(String(e));
      }
    }
  }
}

collected.status = response.status;
console.log(JSON.stringify(collected));
