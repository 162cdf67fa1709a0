// The pick list that asks what a pair runs (the Runs view's "Run pair…" and "Pair-run with this
// fixed"): the run configurations of each workspace folder, then a command typed in; the one used
// last comes first, under "recently used", as VS Code's own task picker does, so Enter repeats it.
// Pure (no VS Code): the launcher turns the entries into quick pick items.
import type { RunConfigsResult } from '../../server/src/runs/pair-events.js';

/**
 * What a pair runs: a run configuration of a workspace folder, a command typed in, a pair directory
 * again, or a notebook as a program (`python3 NB.ipynb` in `cwd`: its code cells in order).
 */
export type RunChoice =
  | { kind: 'config'; folder: string; name: string }
  | { kind: 'adHoc' }
  | { kind: 'rerun'; dir: string; cwd: string; title: string }
  | { kind: 'notebook'; cwd: string; notebook: string; title: string };

/** What the workspace keeps of the last choice (a re-run or a notebook is not kept: it belongs to one pair or file). */
export type LastChoice = Exclude<RunChoice, { kind: 'rerun' | 'notebook' }>;

export interface PickFolder {
  name: string;
  /** Its path (what a config choice names). */
  path: string;
  listed: RunConfigsResult;
}

export interface PickEntry {
  label: string;
  description?: string;
  detail?: string;
  /** A separator line with this label. */
  separator?: true;
  choice?: RunChoice;
  /** A configuration that cannot run: picking it opens its file. */
  broken?: { file: string };
}

const AD_HOC: PickEntry = { label: '$(terminal) Ad hoc command…', description: 'type a command; bitexact.pair.* settings apply', choice: { kind: 'adHoc' } };

/**
 * The entries, in order. `first` go on top (a suspect's own pair), then the last choice when it is
 * still on offer, then each folder's configurations and the ad-hoc command, without the last one again.
 */
export function runPickEntries(folders: readonly PickFolder[], last: LastChoice | undefined, first: readonly PickEntry[] = []): PickEntry[] {
  const many = folders.length > 1;
  const groups: PickEntry[] = [];
  let recent: PickEntry | undefined;
  for (const { name, path, listed } of folders) {
    if (!listed.configs.length && !listed.error) continue;
    const group: PickEntry[] = [];
    if (listed.error) group.push({ label: '$(warning) pyproject.toml', description: listed.error, broken: { file: listed.file ?? '' } });
    for (const c of listed.configs) {
      if ('error' in c) {
        group.push({ label: `$(warning) ${c.name}`, description: c.error, broken: { file: listed.file ?? '' } });
        continue;
      }
      const entry: PickEntry = { label: `$(play) ${c.name}`, description: c.command.join(' '), ...detailOf(c, many ? name : undefined), choice: { kind: 'config', folder: path, name: c.name } };
      if (last?.kind === 'config' && last.folder === path && last.name === c.name) recent = entry;
      else group.push(entry);
    }
    if (group.length) groups.push({ label: many ? `run configurations · ${name}` : 'run configurations', separator: true }, ...group);
  }
  const adHocLast = last?.kind === 'adHoc';
  if (adHocLast) recent = AD_HOC;
  return [
    ...first,
    ...(recent ? [{ label: 'recently used', separator: true as const }, recent] : []),
    ...groups,
    ...(adHocLast ? [] : [{ label: '', separator: true as const }, AD_HOC]),
  ];
}

/** The choice to keep as the last one (undefined for a re-run or a notebook). */
export function lastOf(choice: RunChoice): LastChoice | undefined {
  return choice.kind === 'rerun' || choice.kind === 'notebook' ? undefined : choice;
}

/** The first entry of "Pair-run with this fixed" on a notebook's finding: the notebook itself, run as a program from `cwd`. */
export function notebookEntry(cwd: string, notebook: string): PickEntry {
  const title = `python3 ${notebook}`;
  return { label: `$(notebook) ${notebook}`, description: `${title}: its code cells in order, as one program`, choice: { kind: 'notebook', cwd, notebook, title } };
}

/** A kept value read back: undefined unless it is a choice. */
export function readLastChoice(value: unknown): LastChoice | undefined {
  const v = value as Partial<{ kind: string; folder: unknown; name: unknown }> | undefined;
  if (v?.kind === 'adHoc') return { kind: 'adHoc' };
  if (v?.kind === 'config' && typeof v.folder === 'string' && typeof v.name === 'string') return { kind: 'config', folder: v.folder, name: v.name };
  return undefined;
}

function detailOf(c: { runs?: number; variants?: string[] }, folder: string | undefined): { detail?: string } {
  const parts = [...(c.runs !== undefined ? [`${c.runs} runs`] : []), ...(c.variants?.length ? [`variants ${c.variants.join(', ')}`] : []), ...(folder ? [folder] : [])];
  return parts.length ? { detail: parts.join(' · ') } : {};
}
