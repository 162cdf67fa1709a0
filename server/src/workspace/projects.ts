// Which settings apply to a file, and which files form one program. Settings come from the nearest
// pyproject.toml with a [tool.bitexact] table (walking up from the file), or from an explicit
// --config file; command-line flags override both. A program is the files under the same project
// root (the nearest directory with a pyproject.toml, setup.py, setup.cfg or .git): deterministic
// mode turned on in one project's train.py must not silence another project's findings.
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { mergeSettings, parsePyproject, parseStandaloneConfig, Settings, SettingsOverrides } from '../analysis/config.js';
import { isOffPath } from '../analysis/roles.js';

const PROJECT_MARKERS = ['pyproject.toml', 'setup.py', 'setup.cfg', '.git'];

interface ConfigLayer {
  dir: string;
  overrides: SettingsOverrides;
}

export class ProjectResolver {
  private readonly configByDir = new Map<string, ConfigLayer | undefined>();
  private readonly rootByDir = new Map<string, string>();
  private readonly explicit: ConfigLayer | undefined;

  /**
   * @param configFile explicit --config file (a pyproject.toml, or a bare bitexact TOML table)
   * @param cli overrides from command-line flags
   */
  constructor(
    private readonly cli: SettingsOverrides,
    configFile?: string,
    private readonly fallbackRoot = process.cwd(),
  ) {
    if (configFile) this.explicit = { dir: path.dirname(path.resolve(configFile)), overrides: readExplicitConfig(configFile) };
  }

  settingsFor(file: string): Settings {
    return mergeSettings(this.configFor(file), this.cli);
  }

  /** The configuration-file layer that applies to a file (explicit --config, else the nearest). */
  configFor(file: string): SettingsOverrides | undefined {
    return (this.explicit ?? this.nearestConfig(path.dirname(file)))?.overrides;
  }

  /** True when the file matches an `exclude` glob of the configuration that applies to it. */
  isExcluded(file: string, settings: Settings): boolean {
    if (settings.exclude.length === 0) return false;
    const base = (this.explicit ?? this.nearestConfig(path.dirname(file)))?.dir ?? this.fallbackRoot;
    const relative = path.relative(base, file).split(path.sep).join('/');
    return picomatch.isMatch(relative, settings.exclude, { dot: true }) || settings.exclude.some((g) => picomatch.isMatch(relative, `${g}/**`, { dot: true }));
  }

  /** A test, benchmark, docs or build file, by its path from the project root (roles.ts). */
  isOffPath(file: string, settings: Settings): boolean {
    const relative = path.relative(this.projectRoot(file), file).split(path.sep).join('/');
    return isOffPath(relative.startsWith('..') ? path.basename(file) : relative, settings.testCodeGlobs);
  }

  projectRoot(file: string): string {
    const start = path.dirname(file);
    const cached = this.rootByDir.get(start);
    if (cached) return cached;
    let root = this.fallbackRoot;
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (PROJECT_MARKERS.some((m) => fs.existsSync(path.join(dir, m)))) {
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
      const overrides = parsePyproject(fs.readFileSync(file, 'utf8'), file);
      if (overrides) layer = { dir, overrides };
    }
    if (!layer && path.dirname(dir) !== dir) layer = this.nearestConfig(path.dirname(dir));
    this.configByDir.set(dir, layer);
    return layer;
  }
}

function readExplicitConfig(file: string): SettingsOverrides {
  const text = fs.readFileSync(file, 'utf8');
  if (path.basename(file) === 'pyproject.toml') return parsePyproject(text, file) ?? {};
  // A standalone file holds the table's keys at top level, like ruff.toml.
  return parseStandaloneConfig(text, file);
}
