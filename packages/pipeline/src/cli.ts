#!/usr/bin/env node
// The `rocke` executable: runs main() on the process arguments and exits with its status.
import { main, processIo } from './cli/main.js';

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`rocke: unexpected error: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
