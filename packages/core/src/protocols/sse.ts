// A minimal server-sent-events reader for bodies that were read to the end (WHATWG SSE rules,
// minus reconnection): events end at a blank line, several `data:` lines join with "\n".

export interface SseEvent {
  event: string | null;
  data: string;
}

/** True when the body looks like an SSE stream rather than a JSON document. */
export function looksLikeSse(bodyText: string): boolean {
  const first = bodyText.trimStart().split(/\r\n|\r|\n/, 1)[0] ?? "";
  return /^(data|event|id|retry):/.test(first) || first.startsWith(":");
}

export function parseSse(bodyText: string): SseEvent[] {
  const events: SseEvent[] = [];
  let event: string | null = null;
  let data: string[] = [];
  const dispatch = () => {
    if (data.length > 0) events.push({ event, data: data.join("\n") });
    event = null;
    data = [];
  };
  for (const line of bodyText.split(/\r\n|\r|\n/)) {
    if (line === "") {
      dispatch();
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  }
  // A body cut without the final blank line still delivers what it holds.
  dispatch();
  return events;
}
