import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { addonCandidates, getBinding, libraryCandidates, NATIVE_ABI_VERSION } from './binding.js';
import { RuntimeUnavailableError } from './errors.js';
import { openDevice, probeRuntime, unavailableMessage } from './runtime.js';

const packageRoot = join(import.meta.dirname, '..');
const cudaHeader = '/usr/local/cuda/include/cuda.h';

describe('libraryCandidates', () => {
  it('tries the env override first, then the sonames, then /opt/rocm for HIP', () => {
    expect(libraryCandidates('hip', { ROCKE_HIP_LIB: '/x/libamdhip64.so' })).toEqual([
      '/x/libamdhip64.so',
      'libamdhip64.so',
      'libamdhip64.so.6',
      'libamdhip64.so.7',
      '/opt/rocm/lib/libamdhip64.so',
    ]);
    expect(libraryCandidates('cuda', { ROCKE_CUDA_LIB: '/y/libcuda.so.1' })).toEqual(['/y/libcuda.so.1', 'libcuda.so.1', 'libcuda.so']);
  });

  it('ignores an unset or empty override and the other backend variable', () => {
    expect(libraryCandidates('cuda', { ROCKE_CUDA_LIB: '', ROCKE_HIP_LIB: '/x' })).toEqual(['libcuda.so.1', 'libcuda.so']);
    expect(libraryCandidates('hip', {})[0]).toBe('libamdhip64.so');
  });
});

describe('the compiled addon', () => {
  it('is looked for in build/Release, build/Debug, then the prebuild, and loads with the expected ABI and functions', () => {
    expect(addonCandidates()).toEqual([
      join(packageRoot, 'build', 'Release', 'rocke_hip_runtime.node'),
      join(packageRoot, 'build', 'Debug', 'rocke_hip_runtime.node'),
      join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`, '@rocke+hip-runtime.glibc.node'),
    ]);
    expect(addonCandidates().some((path) => existsSync(path))).toBe(true);
    const binding = getBinding();
    expect(binding.abiVersion).toBe(NATIVE_ABI_VERSION);
    for (const name of ['load', 'deviceCount', 'openDevice', 'alloc', 'copyToDevice', 'loadModule', 'getFunction', 'launch', 'createEvent', 'elapsedMs']) {
      expect(typeof (binding as unknown as Record<string, unknown>)[name]).toBe('function');
    }
    expect(getBinding()).toBe(binding); // cached
  });

  it('rejects handles of the wrong kind without touching them', () => {
    const binding = getBinding();
    expect(() => binding.free({})).toThrow(/buffer must be a native buffer handle/);
    expect(() => binding.launch(null as never, 1, 1, 1, 1, 1, 1, 0, null, new Uint8Array(0))).toThrow(TypeError);
    expect(() => binding.load('metal' as never, [])).toThrow(/backend must be 'hip' or 'cuda'/);
    expect(() => binding.load('cuda', [1] as never)).toThrow(/array of strings/);
  });

  it('a loadable file that is not this addon, or is an older build of it, is named as such', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rocke-addon-'));
    try {
      const foreign = join(dir, 'foreign.cjs');
      writeFileSync(foreign, 'module.exports = { hello: 1 };');
      const stale = join(dir, 'stale.cjs');
      writeFileSync(stale, `module.exports = { abiVersion: ${NATIVE_ABI_VERSION + 1}, launch() {} };`);
      expect(() => getBinding(foreign)).toThrow(/foreign\.cjs: it loaded, but it is not the @rocke\/hip-runtime addon/);
      expect(() => getBinding(stale)).toThrow(new RegExp(`stale\\.cjs: it has ABI version ${NATIVE_ABI_VERSION + 1}, expected ${NATIVE_ABI_VERSION}: rebuild it`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an addon path that does not exist is reported, not thrown raw', () => {
    let error: unknown;
    try {
      getBinding('/nonexistent/rocke_hip_runtime.node');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect((error as Error).message).toContain('/nonexistent/rocke_hip_runtime.node: not found');
    // The way out names the package a user installed, not a path inside this repository.
    expect((error as Error).message).toContain('npm rebuild @rocke/hip-runtime');
    expect((error as Error).message).not.toMatch(/packages\//);
    const probe = probeRuntime({ binding: '/nonexistent/rocke_hip_runtime.node' });
    expect(probe).toMatchObject({ available: false, attempts: [{ backend: 'addon' }] });
    // Without an addon the message's way out is the addon's (rebuild it), not a GPU driver's.
    const message = unavailableMessage('auto', probe.attempts);
    expect(message).toMatch(/the native addon could not be loaded/);
    expect(message).toContain('npm rebuild @rocke/hip-runtime');
    expect(message).not.toMatch(/NVIDIA driver/);
  });
});

// On this CI machine there is no GPU driver (so no libcuda / libamdhip64); on a GPU machine these
// checks do not apply. Decided from the device nodes, not by probing, so nothing can mask them.
const runtimePresent = existsSync('/dev/nvidiactl') || existsSync('/dev/kfd');

describe.skipIf(runtimePresent)('no GPU runtime on this machine (real dlopen)', () => {
  it('openDevice throws one message listing every path tried, the env override included', () => {
    let error: unknown;
    try {
      openDevice({ env: { ROCKE_CUDA_LIB: '/nonexistent' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    const message = (error as Error).message;
    const expected = [
      '[hip] libamdhip64.so: libamdhip64.so: cannot open shared object file: No such file or directory',
      '[hip] libamdhip64.so.6: libamdhip64.so.6: cannot open shared object file',
      '[hip] libamdhip64.so.7: libamdhip64.so.7: cannot open shared object file',
      '[hip] /opt/rocm/lib/libamdhip64.so: /opt/rocm/lib/libamdhip64.so: cannot open shared object file',
      '[cuda] /nonexistent (from ROCKE_CUDA_LIB): /nonexistent: cannot open shared object file: No such file or directory',
      '[cuda] libcuda.so.1: libcuda.so.1: cannot open shared object file',
      '[cuda] libcuda.so: libcuda.so: cannot open shared object file',
    ];
    for (const line of expected) expect(message).toContain(line);
    expect((error as RuntimeUnavailableError).attempts.map((a) => a.path)).toEqual([
      'libamdhip64.so',
      'libamdhip64.so.6',
      'libamdhip64.so.7',
      '/opt/rocm/lib/libamdhip64.so',
      '/nonexistent',
      'libcuda.so.1',
      'libcuda.so',
    ]);
  });

  it('a library that loads but is not the runtime is named with the missing symbols', () => {
    const probe = probeRuntime({ backend: 'cuda', env: { ROCKE_CUDA_LIB: 'libc.so.6' } });
    expect(probe.available).toBe(false);
    expect(probe.attempts[0]).toMatchObject({ backend: 'cuda', path: 'libc.so.6' });
    expect(probe.attempts[0]!.error).toMatch(/^loaded, but it does not export cuGetErrorString, cuGetErrorName, cuInit/);
  });

  it('the native layer refuses to use an unloaded backend', () => {
    expect(() => getBinding().deviceCount('hip')).toThrow(/not loaded/);
  });

  it('importing the package loads nothing and never throws', async () => {
    vi.resetModules();
    const fresh = await import('./index.js');
    expect(typeof fresh.openDevice).toBe('function');
    expect(() => fresh.openDevice({ env: {} })).toThrow(fresh.RuntimeUnavailableError);
  });
});

describe.skipIf(!existsSync(cudaHeader))('CUDA symbol table against cuda.h', () => {
  it('every entry point and constant matches the real header (g++ static_asserts)', () => {
    const out = execFileSync('g++', ['-std=c++17', '-fsyntax-only', `-I${join(cudaHeader, '..')}`, join(packageRoot, 'native', 'cuda_abi_check.cc')], { encoding: 'utf8' });
    expect(out).toBe('');
  });
});

