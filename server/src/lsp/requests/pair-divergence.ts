// bitexact/pairDivergence: where a probed pair's runs first part in the source, and the static
// findings on that path (lsp/pair-divergence.ts); the showPairDivergence command does the same for
// editors without a Runs view (a pair directory, or the workspace's newest pair that parted).
import path from 'node:path';
import { ResponseError } from 'vscode-languageserver/node';
import type { PairDivergenceParams, PairDivergenceResult } from '../../runs/pair-divergence-wire.js';
import type { Session } from '../session.js';

export async function pairDivergence(session: Session, params: PairDivergenceParams): Promise<PairDivergenceResult> {
  if (typeof params?.dir !== 'string' || params.dir === '') throw new ResponseError(-32602, 'dir: expected a pair directory');
  return { divergence: await session.divergences.read(params.dir) };
}

export async function showPairDivergence(session: Session, args: unknown[] | undefined): Promise<PairDivergenceResult> {
  const dir = args?.[0];
  if (dir === undefined || dir === null || dir === '') return { divergence: await session.divergences.newest() };
  if (typeof dir !== 'string') throw new ResponseError(-32602, 'the argument: expected a pair directory');
  const folder = session.folders[0];
  return { divergence: await session.divergences.read(path.isAbsolute(dir) || !folder ? dir : path.join(folder, dir)) };
}
