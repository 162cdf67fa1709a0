#!/usr/bin/env node
// Entry point of the `bitexact` command; the bundles are built by `npm run build` (run by `prepare`).
// `pair` and `compare` load a bundle without the analysis core (half the start-up time).
const command = process.argv[2];
require(command === 'pair' || command === 'compare' ? '../dist/runs.cjs' : '../dist/cli.cjs');
