import { describe, expect, it } from 'vitest';
import { parseMiopenCommand } from './miopen-args.js';

const LINE = 'conv -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1';

describe('parseMiopenCommand', () => {
  it('parses a bf16 driver line, with or without the driver path', () => {
    const want = { N: 1, C: 64, H: 56, W: 56, K: 64, R: 3, S: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
    expect(parseMiopenCommand(LINE.replace('conv ', 'convbfp16 '))).toEqual({ ok: true, problem: want });
    expect(parseMiopenCommand(`/opt/rocm/bin/MIOpenDriver ${LINE.replace('conv ', 'convbfp16 ')} -F 1 -t 1 -V 0 -in_layout NHWC`)).toEqual({ ok: true, problem: want });
  });

  it('reads fp16, grouped, strided lines and long flag names', () => {
    const r = parseMiopenCommand('convfp16 --batchsize 8 --in_channels 256 -H 28 -W 28 --out_channels 512 -y 1 -x 1 -u 2 -v 2 -g 32');
    expect(r).toEqual({
      ok: true,
      problem: { N: 8, C: 256, H: 28, W: 28, K: 512, R: 1, S: 1, padH: 0, padW: 0, strideH: 2, strideW: 2, dilationH: 1, dilationW: 1, groups: 32, dtype: 'fp16' },
    });
  });

  it('applies the driver defaults to unset filter, pad, stride, dilation and groups', () => {
    const r = parseMiopenCommand('convbfp16 -n 2 -c 16 -H 8 -W 8 -k 16');
    expect(r.ok && r.problem).toMatchObject({ R: 3, S: 3, padH: 0, padW: 0, strideH: 1, strideW: 1, groups: 1 });
  });

  it('rejects what the kernels cannot run, with the reason', () => {
    expect(parseMiopenCommand(LINE)).toEqual({ ok: false, reason: "operation 'conv': fp32 is not supported (use convfp16 or convbfp16)" });
    expect(parseMiopenCommand(LINE.replace('conv ', 'convint8 '))).toEqual({ ok: false, reason: "operation 'convint8': int8 is not supported (use convfp16 or convbfp16)" });
    const bf = LINE.replace('conv ', 'convbfp16 ');
    expect(parseMiopenCommand(`${bf} -F 2`)).toEqual({ ok: false, reason: '-F 2 selects a backward direction; conv-direct implements forward only (-F 1)' });
    expect(parseMiopenCommand(`${bf} -F 4`).ok).toBe(false);
    expect(parseMiopenCommand(`${bf} --in_layout NCHW`)).toEqual({ ok: false, reason: 'layout --in_layout NCHW is not supported (NHWC only)' });
    expect(parseMiopenCommand(`${bf} -m trans`)).toEqual({ ok: false, reason: '-m trans is not supported (only -m conv)' });
    expect(parseMiopenCommand(`${bf} -_ 3`)).toEqual({ ok: false, reason: 'spatial dimension 3 is not supported (2-D only)' });
    expect(parseMiopenCommand(`${bf} -Z 1`)).toEqual({ ok: false, reason: 'unknown MIOpenDriver flag -Z' });
    expect(parseMiopenCommand('convbfp16 -c 64 -H 56 -W 56 -k 64')).toEqual({ ok: false, reason: 'missing -n (N)' });
    expect(parseMiopenCommand('convbfp16 -n 1 -n 2 -c 64 -H 56 -W 56 -k 64')).toEqual({ ok: false, reason: 'flag -n repeats N' });
    expect(parseMiopenCommand('convbfp16 -n x -c 64 -H 56 -W 56 -k 64')).toEqual({ ok: false, reason: "flag -n (N) must be an integer (got 'x')" });
    expect(parseMiopenCommand('convbfp16 -n 1 -c 64 -H 56 -W 56 -k')).toEqual({ ok: false, reason: 'flag -k needs a value' });
    expect(parseMiopenCommand('run convbfp16 -n 1')).toEqual({ ok: false, reason: "unexpected token 'run' before the operation 'convbfp16'" });
    expect(parseMiopenCommand('-n 1 -c 1')).toEqual({ ok: false, reason: 'no MIOpenDriver operation found (expected convfp16 or convbfp16)' });
    expect(parseMiopenCommand('convbfp16 -n 1 -c 6 -H 8 -W 8 -k 8 -g 4')).toEqual({ ok: false, reason: 'groups 4 does not divide C 6' });
  });

  it('accepts a token array', () => {
    expect(parseMiopenCommand(['convbfp16', '-n', '1', '-c', '8', '-H', '4', '-W', '4', '-k', '8']).ok).toBe(true);
  });
});
