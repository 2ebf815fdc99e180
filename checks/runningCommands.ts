// Which commands have a running process, as a platform's process table names them: the Linux kernel
// keeps 15 characters of a command name (comm), FreeBSD's ps shows 19 (MAXCOMLEN). A name asked
// for matches a process's full name when the platform could read it, else its name cut the same way.
export class RunningCommands {
  private readonly names: ReadonlySet<string>;

  constructor(
    comms: Iterable<string>,
    readonly commLength: number,
  ) {
    this.names = new Set(comms);
  }

  has(name: string): boolean {
    return this.names.has(name) || this.names.has(name.slice(0, this.commLength));
  }

  /** The wanted names that run, in the order given, once each. */
  among(wanted: readonly string[]): string[] {
    return [...new Set(wanted.filter((name) => this.has(name)))];
  }
}
