// Issue 10 item 10: after a framing error on stdin (a header block without Content-Length, a negative
// length, a line that is no header) the server says so and reads the next well-framed message, where
// it used to stop reading without a word. The real server over stdio, written to byte by byte as a
// broken client would; and the guard alone, fed valid traffic cut at random places, passes it intact.
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FramingGuard } from '../../server/src/lsp/framing.js';
import { ROOT } from '../support/checker.js';

const frame = (message: object) => {
  const body = JSON.stringify({ jsonrpc: '2.0', ...message });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** The server's responses by id and what it wrote on stderr, as they arrive. */
function server(): { child: ChildProcess; responses: Map<number, unknown>; logs: string[]; stderr: () => string; until: (id: number) => Promise<unknown> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'lsp', '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const responses = new Map<number, unknown>();
  const logs: string[] = [];
  let err = '';
  let out = Buffer.alloc(0);
  const waiters = new Map<number, (v: unknown) => void>();
  child.stderr!.on('data', (d) => (err += d));
  child.stdout!.on('data', (d: Buffer) => {
    out = Buffer.concat([out, d]);
    for (;;) {
      const end = out.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/.exec(out.subarray(0, end).toString())![1]);
      if (out.length < end + 4 + length) return;
      const message = JSON.parse(out.subarray(end + 4, end + 4 + length).toString());
      out = out.subarray(end + 4 + length);
      if (message.method === 'window/logMessage') logs.push(message.params.message);
      if (message.id !== undefined && message.method === undefined) {
        responses.set(message.id, message);
        waiters.get(message.id)?.(message);
      }
    }
  });
  const until = (id: number) => new Promise<unknown>((resolve) => (responses.has(id) ? resolve(responses.get(id)) : waiters.set(id, resolve)));
  return { child, responses, logs, stderr: () => err, until };
}

const INITIALIZE = { id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } };

describe('LSP framing errors', () => {
  for (const [name, bad] of [
    ['a header without Content-Length', 'Content-Type: application/vscode-jsonrpc\r\n\r\n{"jsonrpc":"2.0","id":7,"method":"shutdown"}'],
    ['a negative length', 'Content-Length: -5\r\n\r\n'],
    ['a garbage line', 'this is not a header\r\n\r\n'],
    ['garbage with no blank line at all', 'x'.repeat(20_000)],
  ] as const) {
    it(`${name}: reported, and the next message is answered`, async () => {
      const s = server();
      try {
        s.child.stdin!.write(frame(INITIALIZE));
        await s.until(1);
        // The bad input and the next request in one write, then another request cut in two writes.
        s.child.stdin!.write(bad + frame({ id: 2, method: 'shutdown' }));
        expect(await s.until(2)).toMatchObject({ id: 2, result: null });
        const third = frame({ id: 3, method: 'shutdown' });
        s.child.stdin!.write(third.slice(0, 9));
        s.child.stdin!.write(third.slice(9));
        expect(await s.until(3)).toMatchObject({ id: 3 });
        expect(s.stderr()).toMatch(/bitexact lsp: framing error \(.+\); skipping to the next Content-Length header/);
        expect(s.stderr()).toMatch(/resynchronised after skipping \d+ bytes/);
        expect(s.logs.some((m) => /framing error/.test(m))).toBe(true);
        // The request inside the header-less block was skipped with it, not answered.
        expect(s.responses.has(7)).toBe(false);
      } finally {
        s.child.kill();
      }
    }, 30_000);
  }

  it('well-framed traffic cut anywhere passes through the guard unchanged, with no report', () => {
    const messages = [frame(INITIALIZE), frame({ method: 'x', params: { text: 'Content-Length: 3\r\n\r\nü' } }), frame({ id: 9, method: 'shutdown' })].join('');
    const bytes = Buffer.from(messages);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const reports: string[] = [];
        const guard = new FramingGuard((p) => reports.push(p));
        const out: Buffer[] = [];
        guard.on('data', (d: Buffer) => out.push(d));
        let at = 0;
        for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
          guard.write(bytes.subarray(at, cut));
          at = cut;
        }
        guard.write(bytes.subarray(at));
        expect(Buffer.concat(out).equals(bytes)).toBe(true);
        expect(reports).toEqual([]);
      }),
      { numRuns: 200, seed: 10 },
    );
  });
});
