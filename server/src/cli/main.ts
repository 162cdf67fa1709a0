// The `bitexact` command line: a thin shell over the analysis core.
import { parseArgs } from 'node:util';
import { ConfigError, configWarnings, SettingsOverrides } from '../analysis/config.js';
import { Checker } from '../analysis/index.js';
import { parseTorchVersion } from '../analysis/version.js';
import type { AnalyseMany } from '../lsp/workspace-scan.js';
import { UsageError } from '../workspace/files.js';
import { runCheck } from './check.js';
import { runCommand } from './exit.js';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { formatConcise } from './format-concise.js';
import { formatGithub } from './format-github.js';
import { formatJson } from './format-json.js';
import { formatSarif } from './format-sarif.js';
import { formatStatistics } from './format-statistics.js';
import { formatText } from './format-text.js';
import { bundledGrammar } from './grammar.js';
import { fixExamples } from './rule-examples.js';
import { bundledFixes, formatRuleList, formatRulePage, pageFixes, ruleJson, writeRulePages } from './rules-command.js';
import packageJson from '../../../package.json';

const USAGE = `Usage: bitexact <command> [options]

Commands:
  check [PATH...]      check Python files and directories (default: .)
  rule ID              print a rule's page: why, the alternative, its cost, the fixes (--format json)
  rules                list every rule (--format json; --write-docs DIR writes every page)
  lsp --stdio          run the language server on stdin/stdout
  pair [...] -- CMD    run CMD several times and compare the metrics it logs (pair --help)
  compare PATH...      compare training logs already on disk (compare --help)

Options for check:
  --format FORMAT          text (default), concise (a line a finding), json, sarif or github
                           (GitHub Actions annotations)
  --statistics             print how many findings each rule has instead of the findings
  --output-file FILE       write the report to FILE instead of standard output
  --entry FILE             check FILE and the workspace files it imports (repeatable; with PATHs, both)
  --select ID,...          only these rules or prefixes (BX1, BX102)
  --ignore ID,...          skip these rules or prefixes
  --torch-version X.Y      the torch version whose behaviour applies (default 2.11)
  --deterministic-mode M   auto (default: detect torch.use_deterministic_algorithms), on or off
  --config FILE            use this pyproject.toml or bitexact TOML file for every path
  --fix                    apply safe fixes
  --unsafe-fixes           apply safe and unsafe fixes
  --no-color               plain text output

Exit status: 0 no warning or error, 1 findings of severity warning or error, 2 usage or internal error.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === 'version') {
    process.stdout.write(`bitexact ${packageJson.version}\n`);
    return 0;
  }
  if (command === 'lsp') {
    if (!rest.some((a) => a === '--stdio' || a === '--node-ipc' || a.startsWith('--socket=') || a.startsWith('--pipe='))) {
      throw new UsageError('lsp needs a transport: --stdio (or --node-ipc, --socket=PORT, --pipe=NAME)');
    }
    // A long-lived process that analyses file after file: most of its RSS was garbage V8 had not
    // collected yet (50 open files of 5,000 lines: ~70 MB live heap, wasm memory included, for an
    // RSS of 240-600 MB). V8's memory-saving mode collects sooner and grows the heap less, for a
    // little more time per edit (bench/lsp-latency.mjs measures both). The one-shot `check` keeps
    // the defaults: it exits before its garbage matters.
    v8.setFlagsFromString('--optimize-for-size');
    // Speaks LSP on stdio (`--stdio`) or on the IPC channel VS Code's client opens (`--node-ipc`);
    // vscode-languageserver reads the transport from the process arguments.
    // Loaded on demand (here and for pair/compare) so each command starts without the others' code.
    const { startLanguageServer } = await import('../lsp/server.js');
    const { stdioConnection } = await import('../lsp/framing.js');
    const { analyseInWorkers, threadsFor } = await import('./analysis-pool.js');
    const checker = await Checker.create(bundledGrammar());
    // Workspace scans analyse many closed files in worker threads, as `check` does (each analysis with
    // its calls: the server keeps every file's program facts).
    const analyseMany: AnalyseMany = (jobs, options) => {
      const threads = threadsFor(jobs.length);
      if (threads === 0) return undefined;
      const pooled = jobs.map((j) => ({ text: j.text, settings: { torchVersion: j.settings.torchVersion, guardNames: j.settings.guardNames }, calls: true }));
      return analyseInWorkers(pooled, threads, checker, options).then(() => undefined);
    };
    // On stdio, the framing is checked first (framing.ts): a bad header is reported and skipped.
    startLanguageServer(checker, rest.includes('--stdio') ? stdioConnection() : undefined, analyseMany);
    return new Promise<number>(() => undefined); // runs until the client shuts it down
  }
  if (command === 'pair') return (await import('./pair-command.js')).runPairCommand(rest);
  if (command === 'compare') return (await import('./runs-commands.js')).runCompareCommand(rest);
  const checker = await Checker.create(bundledGrammar());
  const rules = [...checker.rules.values()];
  if (command === 'rules') {
    const { values } = parseArgs({ args: rest, options: { format: { type: 'string', default: 'text' }, 'write-docs': { type: 'string' }, examples: { type: 'string' } } });
    if (values['write-docs']) {
      // --examples DIR: the rule fixtures whose fixes the pages show (the build passes them).
      writeRulePages(rules, values['write-docs'], values.examples ? pageFixes(fixExamples(checker, values.examples)) : new Map());
      return 0;
    }
    process.stdout.write(formatRuleList(rules, values.format === 'json'));
    return 0;
  }
  if (command === 'rule') {
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { format: { type: 'string', default: 'markdown' } } });
    const id = positionals[0]?.toUpperCase();
    const rule = id ? checker.rules.get(id) ?? rules.find((r) => r.name === positionals[0]) : undefined;
    if (!rule) throw new UsageError(`unknown rule '${positionals[0] ?? ''}'; \`bitexact rules\` lists them`);
    if (values.format !== 'markdown' && values.format !== 'json') throw new UsageError(`--format must be markdown or json, not '${values.format}'`);
    const fixes = bundledFixes().get(rule.id) ?? [];
    process.stdout.write(values.format === 'json' ? ruleJson(rule, fixes) : formatRulePage(rule, fixes));
    return 0;
  }
  if (command !== 'check') throw new UsageError(`unknown command '${command}'\n\n${USAGE}`);

  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      format: { type: 'string', default: 'text' },
      select: { type: 'string' },
      ignore: { type: 'string' },
      'torch-version': { type: 'string' },
      'deterministic-mode': { type: 'string' },
      config: { type: 'string' },
      fix: { type: 'boolean', default: false },
      'unsafe-fixes': { type: 'boolean', default: false },
      'no-color': { type: 'boolean', default: false },
      statistics: { type: 'boolean', default: false },
      'output-file': { type: 'string' },
      entry: { type: 'string', multiple: true },
    },
  });
  const format = values.format!;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not '${format}'`);
  if (values.statistics && format !== 'text' && format !== 'json') throw new UsageError('--statistics prints text or json (--format json)');
  const outputFile = values['output-file'];
  if (outputFile !== undefined && (outputFile === '' || (fs.existsSync(outputFile) && fs.statSync(outputFile).isDirectory()))) {
    throw new UsageError(`--output-file: '${outputFile}' is a directory or empty; give a file path`);
  }
  const overrides: SettingsOverrides = {};
  if (values.select) overrides.select = idList(values.select, '--select');
  if (values.ignore) overrides.ignore = idList(values.ignore, '--ignore');
  if (values['torch-version']) {
    try {
      overrides.torchVersion = parseTorchVersion(values['torch-version']);
    } catch (error) {
      throw new UsageError(`--torch-version: ${(error as Error).message}`);
    }
    for (const warning of configWarnings({ torchVersion: overrides.torchVersion }, '--torch-version')) process.stderr.write(`bitexact: warning: ${warning}\n`);
  }
  const mode = values['deterministic-mode'];
  if (mode !== undefined) {
    if (mode !== 'auto' && mode !== 'on' && mode !== 'off') throw new UsageError(`--deterministic-mode must be auto, on or off, not '${mode}'`);
    overrides.deterministicMode = mode;
  }
  for (const entry of values.entry ?? []) {
    if (!fs.existsSync(entry) || !fs.statSync(entry).isFile()) throw new UsageError(`--entry: '${entry}' is not a file`);
  }
  const { report, exitCode } = await runCheck(checker, {
    entries: values.entry,
    paths: positionals,
    cwd: process.cwd(),
    overrides,
    configFile: values.config,
    fix: values.fix! || values['unsafe-fixes']!,
    unsafeFixes: values['unsafe-fixes']!,
    note: (message) => process.stderr.write(`bitexact: note: ${message}\n`),
    warn: (message) => process.stderr.write(`bitexact: warning: ${message}\n`),
    error: (message) => process.stderr.write(`bitexact: error: ${message}\n`),
    knownRules: new Set(checker.rules.keys()),
  });
  const color = format === 'text' && outputFile === undefined && !values['no-color'] && process.stdout.isTTY === true && !process.env['NO_COLOR'];
  const output = values.statistics
    ? formatStatistics(report, format === 'json')
    : format === 'json'
      ? formatJson(report)
      : format === 'sarif'
        ? formatSarif(report, rules, packageJson.version)
        : format === 'github'
          ? formatGithub(report)
          : format === 'concise'
            ? formatConcise(report)
            : formatText(report, { color });
  if (outputFile === undefined) process.stdout.write(output);
  else {
    fs.mkdirSync(path.dirname(path.resolve(outputFile)), { recursive: true });
    fs.writeFileSync(outputFile, output);
  }
  return exitCode;
}

const FORMATS = ['text', 'concise', 'json', 'sarif', 'github'];

function idList(value: string, flag: string): string[] {
  const ids = value.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
  const bad = ids.find((id) => !/^BX\d{0,3}$/.test(id));
  if (bad) throw new UsageError(`${flag}: '${bad}' is not a rule id or prefix (BX102, BX1)`);
  return ids;
}

runCommand(
  () => main(process.argv.slice(2)),
  (error) => error instanceof UsageError || error instanceof ConfigError,
);
