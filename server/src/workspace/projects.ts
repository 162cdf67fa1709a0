// Which settings apply to a file, and which files form one program. Settings come from the nearest
// pyproject.toml with a [tool.bitexact] table (walking up from the file), or from an explicit
// --config file; command-line flags override both. A program is the files under the same project
// root (the nearest directory with a pyproject.toml, setup.py, setup.cfg or .git): deterministic
// mode turned on in one project's train.py must not silence another project's findings.
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { ConfigError, configWarnings, mergeSettings, parsePyproject, parseStandaloneConfig, Settings, SettingsOverrides } from '../analysis/config.js';
import { isOffPath } from '../analysis/roles.js';

const PROJECT_MARKERS = ['pyproject.toml', 'setup.py', 'setup.cfg', '.git'];

/**
 * A `setup.py` beside an `__init__.py` is a module of its package (`pkg.eval.setup`), which the
 * package's code imports: it marks no project root and is no build script.
 */
function packageModule(dir: string, marker: string): boolean {
  return marker === 'setup.py' && fs.existsSync(path.join(dir, '__init__.py'));
}

interface ConfigLayer {
  dir: string;
  /** The configuration file. */
  file: string;
  overrides: SettingsOverrides;
  /** The file does not parse or validate: its files are not checked (CLI) or get the message (editor). */
  error?: string;
  /** It parses but names what bitexact does not know (configWarnings). */
  warnings: string[];
}

export class ProjectResolver {
  private readonly configByDir = new Map<string, ConfigLayer | undefined>();
  private readonly rootByDir = new Map<string, string>();
  private readonly explicit: ConfigLayer | undefined;

  /**
   * @param configFile explicit --config file (a pyproject.toml, or a bare bitexact TOML table); an
   *   error in it is thrown (ConfigError): it applies to every file
   * @param cli overrides from command-line flags
   * @param knownRules rule ids, to warn about unknown ones in `severity`
   */
  constructor(
    private readonly cli: SettingsOverrides,
    configFile?: string,
    private readonly fallbackRoot = process.cwd(),
    private readonly knownRules?: ReadonlySet<string>,
  ) {
    if (configFile) {
      const overrides = readExplicitConfig(configFile);
      this.explicit = { dir: path.dirname(path.resolve(configFile)), file: configFile, overrides, warnings: configWarnings(overrides, configFile, knownRules) };
    }
  }

  settingsFor(file: string): Settings {
    return mergeSettings(this.configFor(file), this.cli);
  }

  /** The configuration-file layer that applies to a file (explicit --config, else the nearest); throws its ConfigError. */
  configFor(file: string): SettingsOverrides | undefined {
    const layer = this.layerFor(file);
    if (layer?.error) throw new ConfigError(layer.error);
    return layer?.overrides;
  }

  /** The configuration problem that keeps a file from being checked, with the file that has it. */
  configErrorFor(file: string): { file: string; dir: string; message: string } | undefined {
    const layer = this.layerFor(file);
    return layer?.error ? { file: layer.file, dir: layer.dir, message: layer.error } : undefined;
  }

  /** Warnings about the configuration that applies to a file (unknown torch version or rule ids). */
  configWarningsFor(file: string): string[] {
    return this.layerFor(file)?.warnings ?? [];
  }

  private layerFor(file: string): ConfigLayer | undefined {
    return this.explicit ?? this.nearestConfig(path.dirname(file));
  }

  /** True when the file matches an `exclude` glob of the configuration that applies to it. */
  isExcluded(file: string, settings: Settings): boolean {
    if (settings.exclude.length === 0) return false;
    const base = this.layerFor(file)?.dir ?? this.fallbackRoot;
    const relative = path.relative(base, file).split(path.sep).join('/');
    return picomatch.isMatch(relative, settings.exclude, { dot: true }) || settings.exclude.some((g) => picomatch.isMatch(relative, `${g}/**`, { dot: true }));
  }

  /** A test, benchmark, docs or build file, by its path from the project root (roles.ts). */
  isOffPath(file: string, settings: Settings): boolean {
    const relative = path.relative(this.projectRoot(file), file).split(path.sep).join('/');
    return isOffPath(relative.startsWith('..') ? path.basename(file) : relative, settings.testCodeGlobs, packageModule(path.dirname(file), path.basename(file)));
  }

  projectRoot(file: string): string {
    const start = path.dirname(file);
    const cached = this.rootByDir.get(start);
    if (cached) return cached;
    let root = this.fallbackRoot;
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (PROJECT_MARKERS.some((m) => fs.existsSync(path.join(dir, m)) && !packageModule(dir, m))) {
        root = dir;
        break;
      }
      if (path.dirname(dir) === dir) break;
    }
    this.rootByDir.set(start, root);
    return root;
  }

  private nearestConfig(dir: string): ConfigLayer | undefined {
    if (this.configByDir.has(dir)) return this.configByDir.get(dir);
    const file = path.join(dir, 'pyproject.toml');
    let layer: ConfigLayer | undefined;
    if (fs.existsSync(file)) {
      try {
        const overrides = parsePyproject(fs.readFileSync(file, 'utf8'), file);
        if (overrides) layer = { dir, file, overrides, warnings: configWarnings(overrides, file, this.knownRules) };
      } catch (error) {
        // One project's broken file must not stop the others being checked: it governs its own files.
        if (!(error instanceof ConfigError)) throw error;
        layer = { dir, file, overrides: {}, error: error.message, warnings: [] };
      }
    }
    if (!layer && path.dirname(dir) !== dir) layer = this.nearestConfig(path.dirname(dir));
    this.configByDir.set(dir, layer);
    return layer;
  }
}

function readExplicitConfig(file: string): SettingsOverrides {
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) throw new ConfigError(`--config ${file}: a directory, not a TOML file`);
    if (!stat.isFile()) throw new ConfigError(`--config ${file}: not a regular file`);
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`--config ${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? (error as Error).message})`}`);
  }
  if (path.basename(file) === 'pyproject.toml') return parsePyproject(text, file) ?? {};
  // A standalone file holds the table's keys at top level, like ruff.toml.
  return parseStandaloneConfig(text, file);
}
