// Server-Sent Events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// for a stream read with fetch: the browser's EventSource cannot send the Authorization header the API needs.

/**
 * A parser fed the stream's text as it arrives (any chunking); calls `onEvent({ id, type, data })`
 * for each event, `data` being the raw text (its lines joined by newlines). Comments (heartbeats)
 * and fields it does not know are skipped; `retry` is not used (the caller has its own backoff).
 */
export function sseParser(onEvent) {
  let buffer = '';
  let data = [];
  let type = '';
  let id;
  const line = (text) => {
    if (text === '') {
      if (data.length > 0) onEvent({ id, type: type || 'message', data: data.join('\n') });
      data = [];
      type = '';
      id = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') data.push(value);
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\u0000')) id = value;
  };
  return (chunk) => {
    buffer += chunk;
    // a line ends at \r\n, \n or \r; a \r at the very end may be the first half of \r\n: kept for the next chunk
    for (;;) {
      const match = /\r\n|\n|\r(?!$)/.exec(buffer);
      if (!match) break;
      line(buffer.slice(0, match.index));
      buffer = buffer.slice(match.index + match[0].length);
    }
  };
}
