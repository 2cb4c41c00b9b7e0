#!/usr/bin/env python3
"""H200 check and benchmark of the split-reduce kernel (sm_90 PTX from this package).

Needs only PyTorch with CUDA and the driver (libcuda.so.1): the PTX and the launch plans come from
manifest.json, written by `npm run goldens:update` in packages/split-reduce. For every case and
kernel (bf16/fp16 x vector width 4/8) it
  1. runs the planned launches on random fp32 slices and compares y bit for bit with the fixed-order
     fold done by PyTorch (acc = ws[0]; acc += ws[s] for s = 1..splits-1; acc.to(dtype), RNE),
     and with a second run of the kernel;
  2. times the reduce with CUDA graphs (median of several replays) next to PyTorch's
     `ws.sum(0).to(dtype)` (unordered tree reduction) and the fixed-order PyTorch loop.
Prints one line per case and a geometric mean. Exit status 1 if any output differs.
"""
import ctypes
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
HBM_BYTES_PER_S = 4.3e12  # DESIGN.md section 12 roofline bandwidth
DTYPES = {'bf16': torch.bfloat16, 'fp16': torch.float16}

cuda = ctypes.CDLL('libcuda.so.1')
cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
cuda.cuModuleLoadDataEx.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]


def check(status, what):
    if status != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(status, ctypes.byref(name))
        raise RuntimeError(f'{what} failed: {name.value.decode() if name.value else status}')


def load_kernels(manifest):
    functions = {}
    for k in manifest['kernels']:
        with open(os.path.join(HERE, k['ptx']), 'rb') as f:
            ptx = f.read() + b'\0'
        module = ctypes.c_void_p()
        check(cuda.cuModuleLoadDataEx(ctypes.byref(module), ptx, 0, None, None), f'cuModuleLoadDataEx {k["name"]}')
        fn = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, k['name'].encode()), f'cuModuleGetFunction {k["name"]}')
        functions[k['name']] = fn
    return functions


CTYPES = {'ptr': ctypes.c_uint64, 'i32': ctypes.c_int32, 'i64': ctypes.c_int64}


def prepared_launches(manifest, case, fn, ws, y):
    """ctypes argument arrays for each launch, views resolved against the tensors' addresses."""
    base = {'ws': ws.data_ptr(), 'y': y.data_ptr()}
    out = []
    for launch in case['launches']:
        values = []
        for entry, v in zip(manifest['abi'], launch['kernargs']):
            raw = base[v['buffer']] + v['offsetBytes'] if isinstance(v, dict) else v
            values.append(CTYPES[entry['type']](raw))
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
        out.append((launch['grid'], launch['block'], values, params))
    return out


def launch_all(fn, prepared):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for grid, block, _values, params in prepared:
        check(cuda.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream, params, None), 'cuLaunchKernel')


def graph_time_us(body, reps=20, replays=15):
    """Median time of one `body()` from CUDA-graph replays of `reps` back-to-back calls."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            body()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / reps)
    times.sort()
    return times[len(times) // 2]


def fixed_order_fold(ws, dtype):
    acc = ws[0].clone()
    for s in range(1, ws.shape[0]):
        acc += ws[s]
    return acc.to(dtype)


def main():
    with open(os.path.join(HERE, 'manifest.json')) as f:
        manifest = json.load(f)
    dev = torch.device('cuda')
    torch.zeros(1, device=dev)  # makes the primary context current for the driver API
    print(f'device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, CUDA {torch.version.cuda}')
    functions = load_kernels(manifest)
    gen = torch.Generator(device=dev)
    bad = 0
    ratios = []
    header = f'{"case":16} {"dtype":5} {"vw":>2} {"splits":>6} {"count":>9} {"bits":>5} {"ours us":>8} {"GB/s":>7} {"roof%":>6} {"sum(0) us":>9} {"loop us":>8} {"x sum(0)":>8}'
    print(header)
    for case in manifest['cases']:
        count, splits, dtype = case['count'], case['splits'], DTYPES[case['dtype']]
        gen.manual_seed(count * 31 + splits)
        # Magnitudes from 2^-12 to 2^12, both signs: the fold order shows in the low bits.
        ws = torch.randn(splits, count, device=dev, generator=gen) * torch.exp2(torch.randint(-12, 13, (splits, count), device=dev, generator=gen).float())
        y = torch.empty(count + 64, dtype=dtype, device=dev)
        fn = functions[case['kernel']]
        prepared = prepared_launches(manifest, case, fn, ws, y)

        y.view(torch.int16).fill_(0x5A5A)
        launch_all(fn, prepared)
        first = y.clone()
        y.view(torch.int16).fill_(0x3C3C)
        launch_all(fn, prepared)
        torch.cuda.synchronize()
        want = fixed_order_fold(ws, dtype)
        got = first[:count]
        mismatches = int((got.view(torch.int16) != want.view(torch.int16)).sum().item())
        rerun_same = bool(torch.equal(first[:count].view(torch.int16), y[:count].view(torch.int16)))
        canary_ok = bool((first[count:].view(torch.int16) == 0x5A5A).all().item())
        ok = mismatches == 0 and rerun_same and canary_ok
        if not ok:
            bad += 1
            idx = int((got.view(torch.int16) != want.view(torch.int16)).nonzero()[0].item()) if mismatches else -1
            print(f'  MISMATCH {case["label"]} {case["kernel"]}: {mismatches} differ (first at {idx}), rerun identical {rerun_same}, canary intact {canary_ok}')

        ours = graph_time_us(lambda: launch_all(fn, prepared))
        out = torch.empty(count, dtype=dtype, device=dev)
        torch_sum = graph_time_us(lambda: out.copy_(ws.sum(0)))
        torch_loop = graph_time_us(lambda: out.copy_(fixed_order_fold(ws, dtype)))
        moved = splits * count * 4 + count * 2
        gbs = moved / (ours * 1e-6) / 1e9
        roof = moved / HBM_BYTES_PER_S * 1e6 / ours * 100
        ratio = torch_sum / ours
        ratios.append(ratio)
        print(f'{case["label"]:16} {case["dtype"]:5} {case["vectorWidth"]:>2} {splits:>6} {count:>9} {"ok" if ok else "BAD":>5} {ours:8.2f} {gbs:7.0f} {roof:6.1f} {torch_sum:9.2f} {torch_loop:8.2f} {ratio:8.2f}')
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f'geometric mean speed vs torch ws.sum(0).to(dtype): {gm:.2f}x over {len(ratios)} cases; {bad} case(s) with differing bits')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
