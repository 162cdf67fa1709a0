// `--probe`, `--probe-steps` and `--probe-hash` checked (server/src/runs/probe-run.ts), and what they
// put in a run's environment for the probe (python/sitecustomize/bitexact_probe.py reads it).
import { describe, expect, it } from 'vitest';
import { probeEnvironment, probeSpec, ProbeUsageError } from '../../server/src/runs/probe-run.js';

describe('probe settings', () => {
  it('--probe-hash full asks each record for a SHA-256; digest is the default, anything else an error', () => {
    expect(probeSpec('modules', '2-3', 'full')).toEqual({ mode: 'modules', steps: '2-3', hash: 'full' });
    expect(probeSpec('ops', undefined, 'digest')).toEqual({ mode: 'ops' });
    expect(() => probeSpec('modules', undefined, 'md5')).toThrow(/--probe-hash must be digest or full, not 'md5'/);
    expect(() => probeSpec(undefined, undefined, 'full')).toThrow(ProbeUsageError);
    const env = probeEnvironment({ mode: 'modules', hash: 'full' }, '/tmp/p', {}, '/site', false);
    expect(env).toMatchObject({ BITEXACT_PROBE: 'modules', BITEXACT_PROBE_HASH: 'full', BITEXACT_PROBE_DIR: '/tmp/p' });
    expect(probeEnvironment({ mode: 'modules' }, '/tmp/p', {}, '/site', false)['BITEXACT_PROBE_HASH']).toBeUndefined();
  });
});
