/**
 * Runtime diagnostics: things that went wrong with no caller to reject (a pool thread that died
 * between tasks, a notice that could not be written). They must never take the host down, so the
 * sink itself is contained: a throwing host callback is swallowed.
 */
export type DiagnosticSink = (message: string) => void;

/** The host's `onDiagnostic`, or a process warning (visible on stderr, catchable with process.on('warning')). */
export function diagnosticSink(onDiagnostic: DiagnosticSink | undefined): DiagnosticSink {
  const deliver: DiagnosticSink =
    onDiagnostic ?? ((message) => process.emitWarning(message, { type: 'BroodDiagnostic' }));
  return (message) => {
    try {
      deliver(`brood: ${message}`);
    } catch {
      // A diagnostic is best effort: reporting a fault must not become a second fault.
    }
  };
}
