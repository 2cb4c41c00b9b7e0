/**
 * Host time per `ConvHandle.run` call with a record hit, on hip-runtime's fake binding (no GPU):
 * `npx vitest bench --run src/api/open-conv.bench.ts` in packages/pipeline. "beyond the launches"
 * stubs the binding's launch entry point out, so what is left is rocke's own work per call (the
 * checks and the launch loop); "with the fake launches" adds the fake binding's recording of each
 * launch. A benchmark, not a test: nothing here fails on a slow machine.
 */
import { openDevice, type NativeBinding } from '@rocke/hip-runtime';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { bench, describe } from 'vitest';
import { RecordStore } from '../cache/records.js';
import { kernelsDir, PROBLEM, recordFor } from '../testing/conv-kernels.js';
import { convRuntime, openConv } from '../cli/wiring.js';

function opened(split: boolean, stubLaunch: boolean) {
  const k = kernelsDir();
  new RecordStore(k.dir).put(split ? recordFor(k.split, 2) : recordFor(k.dense[0]));
  // Named kernels without bodies: a launch runs nothing on the host.
  const binding: NativeBinding = createFakeBinding({ kernels: Object.fromEntries(Object.keys(k.kernels).map((n) => [n, null])) });
  if (stubLaunch) binding.launch = () => undefined;
  const device = openDevice({ binding });
  const conv = openConv(PROBLEM, { device, cache: k.dir });
  const g = convRuntime().tensors(PROBLEM);
  const [x, w, y] = [device.alloc(g.xBytes), device.alloc(g.wBytes), device.alloc(g.yBytes)];
  conv.run(x, w, y);
  return () => conv.run(x, w, y);
}

describe('openConv run() with a record hit', () => {
  for (const split of [false, true]) {
    const what = split ? 'split_c (conv + reduce)' : 'dense (one launch)';
    const beyond = opened(split, true);
    const fake = opened(split, false);
    bench(`${what}: beyond the launches`, beyond, { time: 500 });
    bench(`${what}: with the fake launches`, fake, { time: 500 });
  }
});
