// Rules that threw on an open document (a bug in bitexact): shown as error diagnostics at their lines,
// and logged the first time each is seen in the document (by rule and message: typing above it moves
// its line, and is not a new error), not on every keystroke.
import type { Diagnostic } from 'vscode-languageserver/node';
import type { RuleError } from '../analysis/file-run.js';
import { ruleErrorDiagnostic } from './convert.js';
import { uriToPath } from './workspace.js';

export class RuleErrorLog {
  private readonly logged = new Set<string>();

  constructor(private readonly log: (message: string) => void) {}

  /** The errors as diagnostics (undefined for none), each logged once per document. */
  diagnostics(uri: string, text: string, errors: readonly RuleError[] | undefined): Diagnostic[] | undefined {
    if (!errors?.length) return undefined;
    for (const error of errors) {
      const key = `${uri}\0${error.rule}\0${error.message}`;
      if (this.logged.has(key)) continue;
      this.logged.add(key);
      this.log(`bitexact: internal error in rule ${error.rule} at ${uriToPath(uri) ?? uri}:${error.line + 1} (${error.message}); the other rules' findings are still reported. Please report this bug`);
    }
    return errors.map((error) => ruleErrorDiagnostic(error, text));
  }

  /** The document was closed: its errors are logged again if it is reopened. */
  forget(uri: string): void {
    for (const key of this.logged) if (key.startsWith(`${uri}\0`)) this.logged.delete(key);
  }
}
