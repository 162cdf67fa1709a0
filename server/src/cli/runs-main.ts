// The entry point bin/bitexact.cjs uses for `pair` and `compare`: the same commands as main.ts, in a
// bundle without the analysis core, rules and language server, so a compare starts in half the time.
import { runCommand } from './exit.js';
import { runPairCommand } from './pair-command.js';
import { runCompareCommand } from './runs-commands.js';

const [command, ...rest] = process.argv.slice(2);
runCommand(() => (command === 'pair' ? runPairCommand(rest) : runCompareCommand(rest)));
