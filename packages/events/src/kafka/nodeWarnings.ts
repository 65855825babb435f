/**
 * kafkajs 2.2.4 (unmaintained) calls setTimeout with a negative delay on every request
 * (requestQueue.scheduleCheckPendingRequests); Node >= 23 warns about that on each CLI run.
 * It is harmless (Node clamps it to 1 ms), so every process that uses kafkajs hides that one
 * warning and prints the rest the way Node would.
 */
let installed = false;

export function hideKafkajsTimeoutWarning(): void {
  if (installed) return;
  installed = true;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'TimeoutNegativeWarning') return;
    console.error(`(node:${process.pid}) ${warning.name}: ${warning.message}`);
  });
}
