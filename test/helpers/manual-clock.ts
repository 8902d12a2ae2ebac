/** A clock tests move by hand: time passes only when they say so. */
export class ManualClock {
  constructor(private t = Date.UTC(2026, 10, 29, 12, 0, 0)) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
