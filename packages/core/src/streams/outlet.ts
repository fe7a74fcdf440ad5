/**
 * The body of one event stream: messages queued as they come and handed to the adapter
 * as one chunk each time it asks. What the client has not taken yet is bounded: past
 * `maxBufferBytes` the stream ends with a final message (a slow consumer is cut off, and
 * resumes with Last-Event-ID when it reconnects). `return()` (the client left) ends it at
 * once, even while the adapter waits for the next message.
 */
export class Outlet implements AsyncIterableIterator<string> {
  private queue: string[] = [];
  private bytes = 0;
  private waiter: ((result: IteratorResult<string>) => void) | null = null;
  /** No more messages are taken; the queue is still handed out. */
  private ending = false;
  private closed = false;

  constructor(
    private readonly maxBufferBytes: number,
    /** Called once, when the stream is over (ended and emptied, or left). */
    private readonly onClose: () => void,
    /** The last message of a stream cut off for being slow. */
    private readonly overflow: () => string,
  ) {}

  /** Queues a message; false when the stream takes no more. */
  push(text: string): boolean {
    if (this.ending) return false;
    if (this.waiter !== null) {
      const waiter = this.waiter;
      this.waiter = null;
      waiter({ value: text, done: false });
      return true;
    }
    this.queue.push(text);
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > this.maxBufferBytes) {
      this.queue.push(this.overflow());
      this.end();
      return false;
    }
    return true;
  }

  /** Takes no more messages; the stream ends once the queued ones (and `last`) are handed out. */
  end(last?: string): void {
    if (this.ending) return;
    if (last !== undefined) this.queue.push(last);
    this.ending = true;
    if (this.waiter !== null && this.queue.length === 0) this.finish();
    else if (this.waiter !== null) {
      const waiter = this.waiter;
      this.waiter = null;
      waiter({ value: this.take(), done: false });
    }
  }

  get open(): boolean {
    return !this.ending;
  }

  next(): Promise<IteratorResult<string>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.take(), done: false });
    if (this.ending || this.closed) {
      this.finish();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<string>> {
    this.ending = true;
    this.queue = [];
    this.bytes = 0;
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private take(): string {
    const chunk = this.queue.length === 1 ? this.queue[0] : this.queue.join('');
    this.queue = [];
    this.bytes = 0;
    return chunk;
  }

  private finish(): void {
    if (this.waiter !== null) {
      const waiter = this.waiter;
      this.waiter = null;
      waiter({ value: undefined, done: true });
    }
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}
