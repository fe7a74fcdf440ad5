/**
 * Large work (a body of megabytes, a sort or projection of many entities) is done in slices,
 * and waits here for its turn between slices (docs/limits.md#large-work). The slices of every
 * request queue in one line, first come first served, and one turn of the event loop runs
 * them for at most SLICES_MS before the loop goes on to its sockets and timers: however many
 * large requests run at once, a cheap request waits at most that long for its turn, not
 * for a slice of each. Small work never waits here: it is answered in its own turn.
 */
const SLICES_MS = 4;

const waiting: Array<() => void> = [];
let scheduled = false;
let started = 0;

/** Resolves when this slice's turn has come (FIFO among all waiting slices). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(runTurn);
    }
  });
}

/** A turn of the event loop: resumes slices one after the other until SLICES_MS is spent. */
function runTurn(): void {
  started = performance.now();
  resumeNext();
}

/** Resumes the first waiting slice, and looks again once its continuation has run (the microtask after it). */
function resumeNext(): void {
  const next = waiting.shift();
  if (next === undefined) {
    scheduled = false;
    return;
  }
  next();
  queueMicrotask(afterSlice);
}

/** The next slice while time is left in this turn; else the rest wait for the next turn. */
function afterSlice(): void {
  if (waiting.length === 0) scheduled = false;
  else if (performance.now() - started < SLICES_MS) resumeNext();
  else setImmediate(runTurn);
}
