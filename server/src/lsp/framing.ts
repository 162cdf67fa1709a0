// LSP framing on stdin, checked before vscode-jsonrpc reads it (issue 10 item 10). Its reader, given a
// header block without a valid Content-Length (none, negative, not a number) or a line that is no
// header at all, throws once and then waits for ever: the server went deaf without a word. Here each
// header block is checked; a bad one is reported (stderr, which the editor shows in its output
// channel) and skipped up to the next `Content-Length:`, so the next well-framed message is read.
import { Transform, TransformCallback } from 'node:stream';
import { format } from 'node:util';
import { Connection, createConnection } from 'vscode-languageserver/node';

const SEPARATOR = Buffer.from('\r\n\r\n');
const LENGTH_HEADER = 'content-length:';
/** A header block longer than this without its blank line is garbage, not a header still arriving. */
const MAX_HEADER_BYTES = 8 * 1024;
/** The longest message taken (a document of max-file-size is far below). */
const MAX_BODY_BYTES = 512 * 1024 * 1024;

export class FramingGuard extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  /** Bytes of the current message's body still to pass through. */
  private body = 0;
  /** After a framing error, until the next Content-Length header: bytes dropped so far. */
  private resyncing = false;
  private skipped = 0;
  constructor(private readonly report: (problem: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.drain();
    done();
  }

  private drain(): void {
    for (;;) {
      if (this.body > 0) {
        const n = Math.min(this.body, this.pending.length);
        if (n === 0) return;
        this.push(this.pending.subarray(0, n));
        this.pending = this.pending.subarray(n);
        this.body -= n;
        continue;
      }
      if (this.pending.length === 0) return;
      if (this.resyncing && !this.seek(0)) return;
      const end = this.pending.indexOf(SEPARATOR);
      if (end < 0) {
        if (this.pending.length > MAX_HEADER_BYTES) this.skip(`${this.pending.length} bytes without a header's end`);
        else return;
        continue;
      }
      const header = this.pending.subarray(0, end).toString('latin1');
      const problem = headerProblem(header);
      if (problem) {
        this.skip(problem);
        continue;
      }
      this.body = contentLength(header)!;
      this.push(this.pending.subarray(0, end + SEPARATOR.length));
      this.pending = this.pending.subarray(end + SEPARATOR.length);
    }
  }

  /** Drops input up to the next Content-Length header; reported once per run of bad input. */
  private skip(problem: string): void {
    if (!this.resyncing) this.report(`bitexact lsp: framing error (${problem}); skipping to the next Content-Length header`);
    this.resyncing = true;
    this.seek(1);
  }

  /** While resynchronising: keeps input from the next `Content-Length:` at or after `from`, if any. */
  private seek(from: number): boolean {
    const text = this.pending.toString('latin1').toLowerCase();
    const next = text.indexOf(LENGTH_HEADER, from);
    // Without one, only a tail that may be the start of one is kept.
    const drop = next >= 0 ? next : text.length - partialHeaderAtEnd(text);
    this.skipped += drop;
    this.pending = this.pending.subarray(drop);
    if (next < 0) return false;
    this.report(`bitexact lsp: resynchronised after skipping ${this.skipped} byte${this.skipped === 1 ? '' : 's'}`);
    this.resyncing = false;
    this.skipped = 0;
    return true;
  }
}

/** How many bytes at the end of `text` begin a Content-Length header. */
function partialHeaderAtEnd(text: string): number {
  for (let n = Math.min(LENGTH_HEADER.length - 1, text.length); n > 0; n--) if (LENGTH_HEADER.startsWith(text.slice(text.length - n))) return n;
  return 0;
}

/** What is wrong with a header block, or undefined when it frames a message. */
function headerProblem(header: string): string | undefined {
  const lines = header.split('\r\n');
  const bad = lines.find((line) => !/^[A-Za-z][\w-]*:/.test(line));
  if (bad !== undefined) return `not a header line: ${JSON.stringify(bad.slice(0, 60))}`;
  const lengths = lines.filter((line) => line.toLowerCase().startsWith(LENGTH_HEADER));
  if (lengths.length === 0) return 'a header without Content-Length';
  if (lengths.length > 1) return 'two Content-Length headers';
  const value = lengths[0]!.slice(LENGTH_HEADER.length).trim();
  if (!/^\d+$/.test(value)) return `Content-Length ${JSON.stringify(value.slice(0, 20))} is not a length`;
  if (Number(value) > MAX_BODY_BYTES) return `Content-Length ${value} is larger than a message may be`;
  return undefined;
}

function contentLength(header: string): number | undefined {
  const line = header.split('\r\n').find((l) => l.toLowerCase().startsWith(LENGTH_HEADER));
  return line === undefined ? undefined : Number(line.slice(LENGTH_HEADER.length).trim());
}

/**
 * The server's connection on stdin/stdout, read through a FramingGuard. A framing problem goes to
 * stderr and to the client's log (window/logMessage).
 */
export function stdioConnection(): Connection {
  let connection: Connection | undefined;
  const guard = new FramingGuard((problem) => {
    process.stderr.write(`${problem}\n`);
    connection?.console.error(problem);
  });
  process.stdin.pipe(guard);
  // vscode-languageserver sends console output to the client only when it opens stdin itself; here
  // it goes to stderr, since nothing but the protocol may reach stdout.
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) console[level] = (...args: unknown[]) => process.stderr.write(`${format(...args)}\n`);
  connection = createConnection(guard, process.stdout);
  return connection;
}
