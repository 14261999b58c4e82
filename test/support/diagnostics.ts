/**
 * A collecting `onDiagnostic` for runtimes that make a tool or hook fail on purpose. Without one,
 * createBrood reports each fault as a `BroodDiagnostic` process warning: noise on the test run's
 * stderr that no test reads. Collected, the suite can check that the fault was reported.
 */
export interface CollectedDiagnostics {
  /** Pass as createBrood's `onDiagnostic`. */
  onDiagnostic(message: string): void;
  /** What the runtime reported, in order. */
  readonly messages: string[];
}

export function collectDiagnostics(): CollectedDiagnostics {
  const messages: string[] = [];
  return { onDiagnostic: (message) => messages.push(message), messages };
}
