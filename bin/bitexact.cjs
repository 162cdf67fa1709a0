#!/usr/bin/env node
// Entry point of the `bitexact` command; the bundle is built by `npm run build` (run by `prepare`).
require('../dist/cli.cjs');
