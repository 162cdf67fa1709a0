// The order test files start in: the longest first, so that the two workers of the main project end
// together instead of one running a long file alone at the end. vitest's own order uses durations it
// cached on this machine, which a clean clone (CI) does not have: it then starts the largest files
// first, and a short file of real torch runs late. The seconds come from test/support/durations.json
// (written by scripts/test-durations.mjs from a vitest JSON report); a file it does not list (a new
// one) starts first, as vitest starts files it has no duration for.
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const DURATIONS = path.join(__dirname, 'durations.json');

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = JSON.parse(fs.readFileSync(DURATIONS, 'utf8')) as Record<string, number>;
    const root = this.ctx.config.root;
    const known = (f: TestSpecification) => seconds[path.relative(root, f.moduleId).split(path.sep).join('/')] ?? Infinity;
    // The projects keep their order (main, then e2e: sequence.groupOrder).
    return [...files].sort((a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || known(b) - known(a) || (a.moduleId < b.moduleId ? -1 : 1));
  }
}
