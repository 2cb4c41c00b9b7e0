#!/usr/bin/env node
// The bench-prep executable (bundled by device/prep.sh): compiles a suite's candidates for a GPU machine.
import { processIo } from '../main.js';
import { UsageError } from '../cli-io.js';
import { defaultDeps } from '../wiring.js';
import { benchPrepCommand } from './prep-command.js';

const io = processIo();
benchPrepCommand(process.argv.slice(2), io, defaultDeps()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      io.stderr(`rocke-bench-prep: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    io.stderr(`rocke-bench-prep: ${err instanceof Error ? err.message : String(err)}\n`);
    if (io.env['ROCKE_DEBUG'] && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
    process.exitCode = 1;
  },
);
