// The floor for `compare`: V8's own JSON.parse of every line of the given JSON Lines files, one file
// after the other in one thread, as a fresh process. Usage: node bench/jsonparse-floor.mjs FILE...
import fs from 'node:fs';

let records = 0;
for (const file of process.argv.slice(2)) {
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line) {
      JSON.parse(line);
      records++;
    }
  }
}
process.stdout.write(`${JSON.stringify({ records })}\n`);
