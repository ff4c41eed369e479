// What the language client logs about the server process, judged. Pure (unit-tested).

/** vscode-languageclient reports every exit of the server process as an error, a normal stop
 * (a restart, a reload: shutdown, then exit with code 0) too, which read as a failure in the
 * log (issue 41). Only that message, exactly, is a clean exit; any other code or a signal is not. */
export function isCleanExit(message: string): boolean {
  return /^Server process exited with code 0\.?$/.test(message);
}
