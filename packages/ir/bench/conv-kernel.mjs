// A direct 3x3 convolution with an LDS halo tile, written once against the @rocke/ir Target
// interface (any atom of gfx950 / gfx942 / sm_90). It is the interpreter's benchmark and
// end-to-end test kernel: the input tile of (TH+2)x(TW+2) pixels x CK channels is staged in LDS
// once per channel chunk, the weights of TK output channels next to it, and all 9 taps read
// shifted windows of that one copy through the MMA atom's lane layout.
import { array, i32, ptr, vec, zero } from '@rocke/ir';

/** Tile of one workgroup: TH x TW output pixels x TK output channels, CK input channels per LDS chunk, 4 waves (2 x 2). */
export const CONV_TILE = Object.freeze({ th: 8, tw: 8, tk: 64, ck: 32, waves: 4 });

/**
 * Builds `conv3x3(x, w, y, N, H, W, C, K)`: x NHWC, w KRSC (K,3,3,C) in the atom's dtype, y NHWK
 * float, stride 1, pad 1. Needs H % TH == 0, W % TW == 0, K % TK == 0, C % CK == 0.
 * Launch: grid [W/TW, H/TH, N*K/TK], block [4 * waveSize, 1, 1].
 */
export function buildConvKernel(t, atomName) {
  const atom = t.atom(atomName);
  const { th, tw, tk, ck, waves } = CONV_TILE;
  const et = atom.aType.elem;
  const threads = waves * t.waveSize;
  const hw = tw + 2;
  const hh = th + 2;
  const m = t.createModule();
  const xs = m.addGlobal({ name: 'xs', valueType: array(hh * hw * ck, et), addrspace: 3, align: 16 });
  const ws = m.addGlobal({ name: 'ws', valueType: array(tk * 9 * ck, et), addrspace: 3, align: 16 });
  const b = t.kernel(m, 'conv3x3', [
    { name: 'x', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'w', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'y', type: ptr(1), attributes: ['noalias'] },
    { name: 'N', type: i32 }, { name: 'H', type: i32 }, { name: 'W', type: i32 }, { name: 'C', type: i32 }, { name: 'K', type: i32 },
  ], { workgroupSize: threads, ids: { workitem: ['x'], workgroup: ['x', 'y', 'z'] } });
  const [N, H, W, C, K] = ['N', 'H', 'W', 'C', 'K'].map((n) => b.arg(n));
  const xb = t.globalBuffer(b, b.arg('x'), b.mul(b.mul(b.mul(b.mul(N, H), W), C), 2));
  const wb = t.globalBuffer(b, b.arg('w'), b.mul(b.mul(K, 18), C));
  const yb = t.globalBuffer(b, b.arg('y'), b.mul(b.mul(b.mul(b.mul(N, H), W), K), 4));
  const tid = t.workitemId(b, 'x');
  const lane = t.laneId(b);
  const wave = b.udiv(tid, t.waveSize, 'wave');
  const w0 = b.mul(t.workgroupId(b, 'x'), tw, 'w0');
  const h0 = b.mul(t.workgroupId(b, 'y'), th, 'h0');
  const kBlocks = b.udiv(K, tk);
  const z = t.workgroupId(b, 'z');
  const n = b.udiv(z, kBlocks, 'n');
  const k0 = b.mul(b.urem(z, kBlocks), tk, 'k0');
  const wm = b.and(wave, 1);
  const wn = b.lshr(wave, 1);
  const waveM = (th * tw) / 2;
  const waveN = tk / 2;
  const MT = waveM / atom.m;
  const NT = waveN / atom.n;
  const vpp = ck / 8; // 16-byte vectors per pixel row of the chunk

  const acc0 = Array.from({ length: MT * NT }, () => zero(atom.cType));
  const accs = b.forLoop({ from: 0, to: C, step: ck, carried: acc0, name: 'chunk' }, (c0, accIn) => {
    b.forLoop({ from: tid, to: hh * hw * vpp, step: threads, name: 'stage.x' }, (e) => {
      const pix = b.udiv(e, vpp);
      const cv = b.urem(e, vpp);
      const ih = b.sub(b.add(h0, b.udiv(pix, hw)), 1);
      const iw = b.sub(b.add(w0, b.urem(pix, hw)), 1);
      const inside = b.and(b.icmp('ult', ih, H), b.icmp('ult', iw, W));
      const elem = b.add(b.mul(b.add(b.mul(b.add(b.mul(n, H), ih), W), iw), C), b.add(c0, b.shl(cv, 3)));
      // Padding pixels read through an offset past the buffer: the target returns zeros there.
      const off = b.select(inside, b.shl(elem, 1), 0x7ffffff0);
      const v = t.globalLoad(b, xb, off, vec(8, et));
      b.store(v, b.gep(et, xs, [b.add(b.mul(pix, ck), b.shl(cv, 3))]), { align: 16 });
    });
    b.forLoop({ from: tid, to: tk * 9 * vpp, step: threads, name: 'stage.w' }, (e) => {
      const row = b.udiv(e, vpp); // kk * 9 + tap
      const cv = b.urem(e, vpp);
      const elem = b.add(b.mul(b.add(b.mul(k0, 9), row), C), b.add(c0, b.shl(cv, 3)));
      const v = t.globalLoad(b, wb, b.shl(elem, 1), vec(8, et));
      b.store(v, b.gep(et, ws, [b.add(b.mul(row, ck), b.shl(cv, 3))]), { align: 16 });
    });
    t.barrier(b);
    const out = b.forLoop({ from: 0, to: 9, carried: accIn, name: 'tap' }, (tap, accT) => {
      const r = b.udiv(tap, 3);
      const s = b.urem(tap, 3);
      return b.forLoop({ from: 0, to: ck, step: atom.k, carried: accT, name: 'kstep' }, (kk, accK) => {
        const afr = [];
        for (let mt = 0; mt < MT; mt++) {
          const vals = [];
          for (let i = 0; i < atom.aType.count; i++) {
            const { row, col } = atom.aAt(b, lane, i);
            const p = b.add(b.add(b.mul(wm, waveM), mt * atom.m), row);
            const py = b.add(b.udiv(p, tw), r);
            const px = b.add(b.urem(p, tw), s);
            const idx = b.add(b.mul(b.add(b.mul(py, hw), px), ck), b.add(kk, col));
            vals.push(b.load(et, b.gep(et, xs, [idx]), { align: 2 }));
          }
          afr.push(b.vector(vals));
        }
        const bfr = [];
        for (let nt = 0; nt < NT; nt++) {
          const vals = [];
          for (let i = 0; i < atom.bType.count; i++) {
            const { row, col } = atom.bAt(b, lane, i);
            const kout = b.add(b.add(b.mul(wn, waveN), nt * atom.n), col);
            const idx = b.add(b.mul(b.add(b.mul(kout, 9), tap), ck), b.add(kk, row));
            vals.push(b.load(et, b.gep(et, ws, [idx]), { align: 2 }));
          }
          bfr.push(b.vector(vals));
        }
        const next = [];
        for (let mt = 0; mt < MT; mt++) for (let nt = 0; nt < NT; nt++) next.push(atom.emit(b, afr[mt], bfr[nt], accK[mt * NT + nt]));
        return next;
      });
    });
    t.barrier(b);
    return out;
  });
  for (let mt = 0; mt < MT; mt++) {
    for (let nt = 0; nt < NT; nt++) {
      b.elements(accs[mt * NT + nt]).forEach((v, i) => {
        const { row, col } = atom.cAt(b, lane, i);
        const p = b.add(b.add(b.mul(wm, waveM), mt * atom.m), row);
        const oh = b.add(h0, b.udiv(p, tw));
        const ow = b.add(w0, b.urem(p, tw));
        const kout = b.add(b.add(k0, b.add(b.mul(wn, waveN), nt * atom.n)), col);
        const elem = b.add(b.mul(b.add(b.mul(b.add(b.mul(n, H), oh), W), ow), K), kout);
        t.globalStore(b, yb, b.shl(elem, 2), v);
      });
    }
  }
  b.ret();
  return m;
}

/** Launch geometry of {@link buildConvKernel} for a problem. */
export function convLaunch(t, { N, H, W, K }) {
  const { th, tw, tk, waves } = CONV_TILE;
  return { grid: [W / tw, H / th, (N * K) / tk], block: [waves * t.waveSize, 1, 1] };
}

/** Plain reference: y[n,h,w,k] = sum over r,s,c of x[n,h+r-1,w+s-1,c] * w[k,r,s,c] (double). */
export function referenceConv(x, w, { N, H, W, C, K }) {
  const y = new Float64Array(N * H * W * K);
  for (let n = 0; n < N; n++) for (let h = 0; h < H; h++) for (let ow = 0; ow < W; ow++) for (let k = 0; k < K; k++) {
    let s = 0;
    for (let r = 0; r < 3; r++) for (let q = 0; q < 3; q++) {
      const ih = h + r - 1;
      const iw = ow + q - 1;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
      for (let c = 0; c < C; c++) s += x[((n * H + ih) * W + iw) * C + c] * w[((k * 3 + r) * 3 + q) * C + c];
    }
    y[((n * H + h) * W + ow) * K + k] = s;
  }
  return y;
}
