// PyTorch Lightning CSVLogger `metrics.csv`: a header naming every metric ever logged plus `step`,
// and sparse rows (a validation row and an epoch row may share one step, each filling its own cells).
// Values are written by Python's csv module as str(float), the shortest round-trip text: full precision.
import { ParsedLog, Precision, SeriesBuilder, emptyLog } from '../series.js';
import { allRoundTrip, describePrinted, parseNumberText } from './numbers.js';

export function readLightningCsv(text: string): ParsedLog {
  const rows = parseCsv(text);
  const header = rows.shift();
  if (!header || header.length < 2) return emptyLog('lightning-csv', 'no CSV header row');
  const stepColumn = header.indexOf('step');
  if (stepColumn < 0) return emptyLog('lightning-csv', `no 'step' column in the header (${header.slice(0, 6).join(', ')})`);
  const builder = new SeriesBuilder('lightning-csv');
  // (step, column) pairs already filled: a second value there is a duplicate step (a restart).
  rows.forEach((row, index) => {
    const line = index + 2;
    if (row.length === 1 && row[0] === '') return;
    if (row.length !== header.length) {
      // CSVLogger rewrites the whole file when a new key appears; a short last row is a cut-off write.
      const last = index === rows.length - 1;
      builder.noteKind(last ? 'cut' : 'width', (n) =>
        last ? `the last row is cut off (line ${line}); it was skipped` : `skipped ${n} row(s) whose width differs from the header (first: line ${line})`,
      );
      return;
    }
    const step = parseNumberText(row[stepColumn]!);
    if (step === undefined || !Number.isSafeInteger(step)) {
      builder.noteKind('step', (n) => `skipped ${n} row(s) without a whole-number step (first: line ${line})`);
      return;
    }
    row.forEach((cell, column) => {
      if (column === stepColumn || cell === '') return;
      const value = parseNumberText(cell);
      if (value === undefined) {
        builder.noteKind(`text:${header[column]}`, (n) => `column '${header[column]}' holds ${n} non-numeric cell(s) (first: line ${line})`);
        return;
      }
      builder.add(header[column]!, step, value, cell);
    });
  });
  if (builder.isEmpty) return emptyLog('lightning-csv', 'the CSV has no numeric metric cells', builder.notes());
  return builder.build(csvPrecision);
}

function csvPrecision(_name: string, texts: string[], values: number[]): Precision {
  if (allRoundTrip(texts, values)) return { exact: true, what: 'CSV str(float) (full precision)' };
  return { exact: false, what: describePrinted(texts) };
}

/** RFC 4180 rows: quoted fields may hold commas, doubled quotes and newlines. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
