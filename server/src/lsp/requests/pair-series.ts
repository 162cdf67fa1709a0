// bitexact/pairSeries: the Divergence view's data, a pair's per-step series and the engine's comparison of them.
import { ResponseError } from 'vscode-languageserver/node';
import { CompareInputError } from '../../runs/compare-inputs.js';
import { PairSeriesParams, readPairSeries } from '../../runs/pair-series.js';

export async function pairSeries(params: PairSeriesParams) {
  try {
    return await readPairSeries(params ?? { paths: [] });
  } catch (error) {
    if (error instanceof CompareInputError) throw new ResponseError(-32602, error.message);
    throw error;
  }
}
