import { describe, expect, it } from "vitest";
import fc from "fast-check";
import "../support/fast-check-seed.js";
import { AsyncQueue } from "../../src/run/async-queue.js";

describe("AsyncQueue", () => {
  it("hands out what was pushed in order, to reads made before and after", async () => {
    const queue = new AsyncQueue<number>();
    const early = queue.next();
    queue.push(1);
    queue.push(2);
    expect(await early).toEqual({ done: false, value: 1 });
    expect(await queue.next()).toEqual({ done: false, value: 2 });
  });

  it("hands out what is queued after end, then is done, and takes nothing more", async () => {
    const queue = new AsyncQueue<string>();
    queue.push("a");
    queue.end();
    queue.push("late");
    expect(await queue.next()).toEqual({ done: false, value: "a" });
    expect(await queue.next()).toEqual({ done: true, value: undefined });
    expect(queue.isFinished).toBe(true);
  });

  it("answers every waiting read with done when it finishes, and tells its owner once", async () => {
    let told = 0;
    const queue = new AsyncQueue<number>({ finished: () => (told += 1) });
    const reads = [queue.next(), queue.next()];
    queue.finish();
    queue.finish();
    expect(await Promise.all(reads)).toEqual([
      { done: true, value: undefined },
      { done: true, value: undefined },
    ]);
    expect(told).toBe(1);
  });

  it("hands out what the owner interposes in place of the next item, which stays first", async () => {
    let owed = true;
    const queue = new AsyncQueue<number>({ interpose: (next) => (owed ? ((owed = false), -next) : undefined) });
    queue.push(5);
    expect((await queue.next()).value).toBe(-5);
    expect((await queue.next()).value).toBe(5);
  });

  it("drops the oldest unread items on request", async () => {
    const queue = new AsyncQueue<number>();
    for (let index = 0; index < 5; index += 1) queue.enqueue(index);
    expect(queue.dropOldest(3)).toEqual([0, 1, 2]);
    expect(queue.unread).toBe(2);
    expect(queue.peek()).toBe(3);
  });

  it("loses and repeats nothing, however pushes and reads interleave", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 3000 }), async (steps) => {
        const queue = new AsyncQueue<number>();
        const reads: Promise<IteratorResult<number>>[] = [];
        let pushed = 0;
        for (const push of steps) {
          if (push) queue.push(pushed++);
          else reads.push(queue.next());
        }
        queue.end();
        const values = (await Promise.all(reads)).filter((result) => !result.done).map((result) => result.value);
        for (let result = await queue.next(); !result.done; result = await queue.next()) values.push(result.value);
        expect(values).toEqual(Array.from({ length: pushed }, (_, index) => index));
      }),
    );
  });
});
