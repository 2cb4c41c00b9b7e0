; Hand-written NVPTX kernels for the H200 smoke test of @rocke/hip-runtime (device/smoke.mjs).
; Written by hand because hip-runtime may not depend on @rocke/ir. Rebuild with device/build-kernels.sh.
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32, i32, i32, i32, i32, i32, float, float, float, float)

@dyn = external addrspace(3) global [0 x i8], align 16

; Every kernarg type, with padding before `base` (i64 after i32) and before `idx` (ptr after f32):
;   y: ptr @0, x: ptr @8, n: i32 @16, base: i64 @24, a: f32 @32, idx: ptr @40   (48 bytes)
; y[i] = a * x[i] + 1.0 and idx[i] = base + i, for i < n.
define ptx_kernel void @ew(ptr addrspace(1) %y, ptr addrspace(1) %x, i32 %n, i64 %base, float %a, ptr addrspace(1) %idx) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %first = mul i32 %cta, %ntid
  %i = add i32 %first, %tid
  %inside = icmp slt i32 %i, %n
  br i1 %inside, label %body, label %done

body:
  %i64 = sext i32 %i to i64
  %xp = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i64
  %xv = load float, ptr addrspace(1) %xp, align 4
  %ax = fmul float %a, %xv
  %yv = fadd float %ax, 1.0
  %yp = getelementptr inbounds float, ptr addrspace(1) %y, i64 %i64
  store float %yv, ptr addrspace(1) %yp, align 4
  %iv = add i64 %base, %i64
  %ip = getelementptr inbounds i64, ptr addrspace(1) %idx, i64 %i64
  store i64 %iv, ptr addrspace(1) %ip, align 8
  br label %done

done:
  ret void
}

; D[M][N] (f32) = A[M][K] (bf16, row-major) x B[K][N], with B given transposed as Bt[N][K] (bf16).
; One warp per 16x8 tile of D: block (32,1,1), grid (N/8, M/16). M % 16 == 0, N % 8 == 0, K % 16 == 0.
; Fragments of mma.sync m16n8k16 (g = lane >> 2, t = lane & 3; isa-facts.md 5.3):
;   a[q] = A[row0 + g + 8*(q&1)][k0 + 2t + 8*(q>>1) .. +1]   b[q] = Bt[col0 + g][k0 + 2t + 8q .. +1]
;   d[i] = D[row0 + g + 8*(i>>1)][col0 + 2t + (i&1)]
define ptx_kernel void @mma_gemm(ptr addrspace(1) %A, ptr addrspace(1) %Bt, ptr addrspace(1) %D, i32 %M, i32 %N, i32 %K) #0 {
entry:
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tileN = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tileM = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %g = lshr i32 %lane, 2
  %t = and i32 %lane, 3
  %row0 = shl i32 %tileM, 4
  %col0 = shl i32 %tileN, 3
  %rowLo = add i32 %row0, %g
  %rowHi = add i32 %rowLo, 8
  %colB = add i32 %col0, %g
  %t2 = shl i32 %t, 1
  %aLoBase = mul i32 %rowLo, %K
  %aHiBase = mul i32 %rowHi, %K
  %bBase = mul i32 %colB, %K
  br label %loop

loop:
  %k0 = phi i32 [ 0, %entry ], [ %k0next, %step ]
  %c0 = phi float [ 0.0, %entry ], [ %d0, %step ]
  %c1 = phi float [ 0.0, %entry ], [ %d1, %step ]
  %c2 = phi float [ 0.0, %entry ], [ %d2, %step ]
  %c3 = phi float [ 0.0, %entry ], [ %d3, %step ]
  %more = icmp slt i32 %k0, %K
  br i1 %more, label %step, label %store

step:
  %kLo = add i32 %k0, %t2
  %kHi = add i32 %kLo, 8
  ; A fragments: bf16 element index, loaded as one i32 (two adjacent bf16, lower index in bits 15:0)
  %ia0 = add i32 %aLoBase, %kLo
  %ia1 = add i32 %aHiBase, %kLo
  %ia2 = add i32 %aLoBase, %kHi
  %ia3 = add i32 %aHiBase, %kHi
  %pa0 = getelementptr inbounds i16, ptr addrspace(1) %A, i32 %ia0
  %pa1 = getelementptr inbounds i16, ptr addrspace(1) %A, i32 %ia1
  %pa2 = getelementptr inbounds i16, ptr addrspace(1) %A, i32 %ia2
  %pa3 = getelementptr inbounds i16, ptr addrspace(1) %A, i32 %ia3
  %a0 = load i32, ptr addrspace(1) %pa0, align 4
  %a1 = load i32, ptr addrspace(1) %pa1, align 4
  %a2 = load i32, ptr addrspace(1) %pa2, align 4
  %a3 = load i32, ptr addrspace(1) %pa3, align 4
  %ib0 = add i32 %bBase, %kLo
  %ib1 = add i32 %bBase, %kHi
  %pb0 = getelementptr inbounds i16, ptr addrspace(1) %Bt, i32 %ib0
  %pb1 = getelementptr inbounds i16, ptr addrspace(1) %Bt, i32 %ib1
  %b0 = load i32, ptr addrspace(1) %pb0, align 4
  %b1 = load i32, ptr addrspace(1) %pb1, align 4
  %r = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %a0, i32 %a1, i32 %a2, i32 %a3, i32 %b0, i32 %b1, float %c0, float %c1, float %c2, float %c3)
  %d0 = extractvalue { float, float, float, float } %r, 0
  %d1 = extractvalue { float, float, float, float } %r, 1
  %d2 = extractvalue { float, float, float, float } %r, 2
  %d3 = extractvalue { float, float, float, float } %r, 3
  %k0next = add i32 %k0, 16
  br label %loop

store:
  %colD = add i32 %col0, %t2
  %dLo = mul i32 %rowLo, %N
  %dHi = mul i32 %rowHi, %N
  %id0 = add i32 %dLo, %colD
  %id2 = add i32 %dHi, %colD
  %pd0 = getelementptr inbounds float, ptr addrspace(1) %D, i32 %id0
  %pd1 = getelementptr inbounds float, ptr addrspace(1) %pd0, i32 1
  %pd2 = getelementptr inbounds float, ptr addrspace(1) %D, i32 %id2
  %pd3 = getelementptr inbounds float, ptr addrspace(1) %pd2, i32 1
  store float %c0, ptr addrspace(1) %pd0, align 4
  store float %c1, ptr addrspace(1) %pd1, align 4
  store float %c2, ptr addrspace(1) %pd2, align 4
  store float %c3, ptr addrspace(1) %pd3, align 4
  ret void
}

; Does nothing: for timing back-to-back launches.
define ptx_kernel void @empty() {
entry:
  ret void
}

; Reverses `count` floats of `in` into `out` through dynamic shared memory (count * 4 bytes of
; it), one block: exercises the opt-in above 48 KiB.
define ptx_kernel void @smem_reverse(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %count) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  br label %fill

fill:
  %j = phi i32 [ %tid, %entry ], [ %jnext, %fillbody ]
  %fillmore = icmp slt i32 %j, %count
  br i1 %fillmore, label %fillbody, label %sync

fillbody:
  %src = getelementptr inbounds float, ptr addrspace(1) %in, i32 %j
  %v = load float, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds float, ptr addrspace(3) @dyn, i32 %j
  store float %v, ptr addrspace(3) %dst, align 4
  %jnext = add i32 %j, %ntid
  br label %fill

sync:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %last = sub i32 %count, 1
  br label %drain

drain:
  %m = phi i32 [ %tid, %sync ], [ %mnext, %drainbody ]
  %drainmore = icmp slt i32 %m, %count
  br i1 %drainmore, label %drainbody, label %done

drainbody:
  %from = sub i32 %last, %m
  %sp = getelementptr inbounds float, ptr addrspace(3) @dyn, i32 %from
  %w = load float, ptr addrspace(3) %sp, align 4
  %op = getelementptr inbounds float, ptr addrspace(1) %out, i32 %m
  store float %w, ptr addrspace(1) %op, align 4
  %mnext = add i32 %m, %ntid
  br label %drain

done:
  ret void
}

attributes #0 = { "nvvm.maxntid"="32,1,1" }
