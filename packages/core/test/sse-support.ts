/**
 * Reading an event stream in tests, as an EventSource does: lines split at `\n`, fields
 * `id`, `event`, `data`, comments (`:`), a blank line ends a message. Works on any body
 * that is an async iterable of chunks: a PlainResponse body, a fetch Response's body, a
 * node http response.
 */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  /** A comment line (heartbeats, the opening `: ok`). */
  comment?: string;
}

export class SseReader {
  private readonly iterator: AsyncIterator<string | Uint8Array>;
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private readonly ready: SseMessage[] = [];
  ended = false;

  constructor(body: AsyncIterable<string | Uint8Array>) {
    this.iterator = body[Symbol.asyncIterator]();
  }

  /** The next message or comment; undefined when the stream ended. Fails after `ms` (a guard, not a timing). */
  async nextAny(ms = 10_000): Promise<SseMessage | undefined> {
    while (this.ready.length === 0) {
      if (this.ended) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.iterator.next(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no event stream message within ${ms} ms`)), ms);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) {
        this.ended = true;
        break;
      }
      this.buffer += typeof chunk.value === 'string' ? chunk.value : this.decoder.decode(chunk.value, { stream: true });
      this.parse();
    }
    return this.ready.shift();
  }

  /** The next message, comments skipped. */
  async next(ms?: number): Promise<SseMessage | undefined> {
    for (;;) {
      const m = await this.nextAny(ms);
      if (m === undefined || m.comment === undefined) return m;
    }
  }

  /** The next message's data parsed as JSON, with its id and event. */
  async nextJson(ms?: number): Promise<{ id?: string; event?: string; data: any }> {
    const m = await this.next(ms);
    if (m === undefined) throw new Error('the event stream ended');
    return { id: m.id, event: m.event, data: JSON.parse(m.data ?? 'null') };
  }

  /** Every message left until the stream ends. */
  async rest(ms?: number): Promise<SseMessage[]> {
    const out: SseMessage[] = [];
    for (let m = await this.next(ms); m !== undefined; m = await this.next(ms)) out.push(m);
    return out;
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }

  private parse(): void {
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const message: SseMessage = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          message.comment = line.slice(1).trim();
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id' || field === 'event') message[field] = value;
        else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
      }
      this.ready.push(message);
    }
  }
}
