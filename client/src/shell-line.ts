// The command line a terminal runs for `bitexact pair` / `compare`: bitexact's own program and
// arguments quoted for the terminal's shell, the user's training command left as typed (the shell
// splits it, as it would if they had typed the whole line).

export type ShellKind = 'posix' | 'powershell';

/** One argument, quoted so the shell passes it through unchanged. */
export function quoteArgument(value: string, shell: ShellKind): string {
  if (/^[\w@%+=:,./-]+$/.test(value)) return value;
  return shell === 'posix' ? `'${value.replaceAll("'", `'\\''`)}'` : `'${value.replaceAll("'", "''")}'`;
}

/** `program args… [-- userCommand]` for the given shell (PowerShell needs `&` to run a quoted path). */
export function shellLine(program: string, args: readonly string[], shell: ShellKind, userCommand?: string): string {
  const quoted = [program, ...args].map((a) => quoteArgument(a, shell)).join(' ');
  const line = shell === 'powershell' ? `& ${quoted}` : quoted;
  return userCommand === undefined ? line : `${line} -- ${userCommand}`;
}
