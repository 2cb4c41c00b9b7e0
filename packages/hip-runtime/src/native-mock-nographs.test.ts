// The real addon against test-support/mock-libcuda.c built with MOCK_NO_GRAPHS: a driver that
// exports everything else but no graph entry points (older than CUDA 11.4). It must still load
// and run launches; only capture fails, naming the absent symbols. Its own file: the addon keeps
// the first CUDA library it loaded for the whole process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockLibrary, compilerMissing, type MockLibrary } from '../test-support/mock-library.js';
import { GpuFeatureUnavailableError } from './errors.js';
import type { Device } from './runtime.js';
import { openDevice } from './runtime.js';

let mock: MockLibrary;
let device: Device;

describe.skipIf(compilerMissing)('native addon over a mock libcuda without graph entry points', () => {
  beforeAll(() => {
    mock = buildMockLibrary('mock-libcuda.c', 'MOCK_CUDA_LOG', ['MOCK_NO_GRAPHS']);
    device = openDevice({ backend: 'cuda', env: { ROCKE_CUDA_LIB: mock.path } });
  });
  afterAll(() => {
    device.close();
    mock.remove();
  });

  it('loads and launches; capture is a GpuFeatureUnavailableError naming every absent symbol', () => {
    const module = device.loadModule(readFileSync(join(import.meta.dirname, '..', 'device', 'kernels.cubin')));
    const empty = module.getFunction('empty', []);
    const missing = ['cuStreamBeginCapture_v2', 'cuStreamEndCapture', 'cuGraphInstantiateWithFlags', 'cuGraphLaunch', 'cuGraphExecDestroy', 'cuGraphDestroy'];
    expect(device.graphSupport()).toEqual({ supported: false, missingSymbols: missing });
    let error: unknown;
    try {
      device.captureGraph(() => empty.launch(1, 1, []));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuFeatureUnavailableError);
    expect((error as Error).message).toBe(`graph capture is not available: the loaded cuda library does not export ${missing.join(', ')}`);
    expect(error).toMatchObject({ backend: 'cuda', missingSymbols: missing });
    mock.clearLog();
    empty.launch(1, 1, []);
    expect(mock.log()).toEqual(['launch empty grid=1,1,1 block=1,1,1 shared=0 stream=default size=0 args=']);
  });
});
