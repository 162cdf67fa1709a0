// Command lines both ways. A terminal runs `bitexact compare`: bitexact's own program and arguments
// quoted for the terminal's shell (shellLine). A pair launched from the Runs view runs without a
// shell, through the engine: the command the user types is split into its arguments here the way a
// POSIX shell would split it (splitCommandLine), with `KEY=VALUE` words in front as its environment.

export type ShellKind = 'posix' | 'powershell';

/** One argument, quoted so the shell passes it through unchanged. */
export function quoteArgument(value: string, shell: ShellKind): string {
  if (/^[\w@%+=:,./-]+$/.test(value)) return value;
  return shell === 'posix' ? `'${value.replaceAll("'", `'\\''`)}'` : `'${value.replaceAll("'", "''")}'`;
}

/** `program args…` for the given shell (PowerShell needs `&` to run a quoted path). */
export function shellLine(program: string, args: readonly string[], shell: ShellKind): string {
  const quoted = [program, ...args].map((a) => quoteArgument(a, shell)).join(' ');
  return shell === 'powershell' ? `& ${quoted}` : quoted;
}

export type SplitLine = { argv: string[]; env: Record<string, string> } | { error: string };

/**
 * A command line split as `sh` splits it: blanks between words, '…' taken as is, "…" with \" \\ \$
 * \` escapes, a backslash outside quotes escaping the next character; leading KEY=VALUE words are the
 * environment; `#` at a word's start begins a comment. What only a shell can do (pipes, redirection,
 * `;`, `&&`, `$VAR`, backquotes) is refused with a message rather than passed on as literal text;
 * glob characters stay literal (as sh leaves a pattern that matches nothing).
 */
export function splitCommandLine(line: string): SplitLine {
  // `quotedAt`: where the word's first quoted character is (an assignment's = must come before it).
  const words: { text: string; quotedAt: number }[] = [];
  let word: { text: string; quotedAt: number } | undefined;
  const add = (c: string, quoted = false) => {
    word ??= { text: '', quotedAt: Infinity };
    if (quoted) word.quotedAt = Math.min(word.quotedAt, word.text.length);
    word.text += c;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { error: 'a single quote is not closed' };
      add(line.slice(i + 1, end), true);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      add('', true);
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`\n'.includes(line[j + 1]!)) j++;
        else if (line[j] === '$' || line[j] === '`') return { error: 'the command runs without a shell: no $ or ` expansion (give the value itself)' };
        add(line[j]!, true);
      }
      if (j >= line.length) return { error: 'a double quote is not closed' };
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return { error: 'the line ends with a backslash' };
      add(line[++i]!, true);
    } else if (c === '#' && !word) {
      break; // a comment, as in sh
    } else if ('|&;<>()$`'.includes(c)) {
      return { error: `the command runs without a shell: \`${c}\` needs one (put the line in a script and run that)` };
    } else add(c);
  }
  if (word) words.push(word);
  const env: Record<string, string> = {};
  let first = 0;
  for (; first < words.length; first++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(words[first]!.text);
    if (!m || words[first]!.quotedAt <= m[1]!.length) break;
    env[m[1]!] = m[2]!;
  }
  const argv = words.slice(first).map((w) => w.text);
  if (argv.length === 0) return { error: 'no command' };
  return { argv, env };
}
