// How every `bitexact` entry point ends: the command's exit code, or a one-line error with code 2
// (a stack trace only for errors that are not the user's: `isUserError` and argument errors).
export function runCommand(main: () => Promise<number>, isUserError: (error: unknown) => boolean = () => false): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      const known = isUserError(error) || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(`bitexact: error: ${known ? (error as Error).message : (error as Error).stack ?? String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
