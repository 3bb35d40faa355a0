/**
 * Gathers the calls made during one turn of the event loop into one call of `run` (at most
 * `maxSize` at a time). Fifty deliveries in flight then cost a few statements instead of fifty round
 * trips and fifty commits, at no added latency: a lone call runs on the next turn.
 *
 * At most `maxInFlight` calls of `run` at once: the calls made while they run wait for one of them to
 * end and then go together (group commit). Under load the batches grow instead of the number of
 * statements and connections; at idle nothing waits, since nothing is in flight.
 */
export class Batcher<I, O> {
  private pending: Array<{ input: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private inFlight = 0;
  private readonly run: (inputs: I[]) => Promise<O[]>;
  private readonly maxSize: number;
  private readonly maxInFlight: number;

  constructor(run: (inputs: I[]) => Promise<O[]>, maxSize = 100, maxInFlight = Infinity) {
    this.run = run;
    this.maxSize = maxSize;
    this.maxInFlight = maxInFlight;
  }

  push(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxSize) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    // The calls left pending go when a run in flight ends.
    while (this.pending.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.pending.splice(0, this.maxSize);
      this.inFlight++;
      this.run(batch.map((b) => b.input))
        .then(
          (outputs) => batch.forEach((b, i) => b.resolve(outputs[i]!)),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  }
}
