target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@lds = external addrspace(3) global [0 x i8], align 16

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8), i32, i32, i32)
declare void @llvm.amdgcn.iglp.opt(i32)
declare void @llvm.amdgcn.s.barrier()
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat>, <8 x bfloat>, <16 x float>, i32, i32, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat>, ptr addrspace(8), i32, i32, i32)

define amdgpu_kernel void @rocke_direct_dense_gfx950_bf16_r1s1_u1v1_p0q0_t8x32x64_ck32_w2x2_a32x32x16_lp8_cs1x8x64_wgm8_iglp0(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %w, ptr addrspace(1) noalias %y, i32 %x_bytes, i32 %w_bytes, i32 %y_bytes, i32 %N, i32 %H, i32 %W, i32 %Ho, i32 %Wo, i32 %groups, i32 %C, i32 %K, i32 %x_stride_n, i32 %x_stride_h, i32 %x_stride_w, i32 %y_stride_n, i32 %y_stride_h, i32 %y_stride_w) #0 {
entry:
  %tid.x = call i32 @llvm.amdgcn.workitem.id.x()
  %lane = and i32 %tid.x, 63
  %wave = lshr i32 %tid.x, 6
  %wave.m = urem i32 %wave, 2
  %wave.n = udiv i32 %wave, 2
  %0 = add i32 %Wo, 31
  %w.tiles = udiv i32 %0, 32
  %1 = add i32 %Ho, 7
  %h.tiles = udiv i32 %1, 8
  %2 = add i32 %K, 63
  %k.tiles.per.block = udiv i32 %2, 64
  %cells.per.image = mul i32 %w.tiles, %h.tiles
  %cells = mul i32 %cells.per.image, %N
  %wgid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %wg.total = mul i32 %k.tiles.per.block, %cells
  %3 = udiv i32 %wg.total, 512
  %wg.limit = mul i32 %3, 512
  %4 = urem i32 %wgid.x, 8
  %5 = udiv i32 %wgid.x, 8
  %6 = udiv i32 %5, 64
  %7 = mul i32 %6, 512
  %8 = mul i32 %4, 64
  %9 = add i32 %7, %8
  %10 = urem i32 %5, 64
  %11 = add i32 %9, %10
  %12 = icmp ult i32 %wgid.x, %wg.limit
  %wg.remapped = select i1 %12, i32 %11, i32 %wgid.x
  %wg.span = mul i32 %cells, 8
  %13 = udiv i32 %wg.remapped, %wg.span
  %14 = mul i32 %13, 8
  %15 = sub i32 %k.tiles.per.block, %14
  %16 = icmp ult i32 %15, 8
  %wg.gsize = select i1 %16, i32 %15, i32 8
  %17 = urem i32 %wg.remapped, %wg.span
  %18 = urem i32 %17, %wg.gsize
  %k.tile = add i32 %14, %18
  %cell = udiv i32 %17, %wg.gsize
  %n = udiv i32 %cell, %cells.per.image
  %19 = urem i32 %cell, %cells.per.image
  %w.tile = urem i32 %19, %w.tiles
  %h.tile = udiv i32 %19, %w.tiles
  %oh0 = mul i32 %h.tile, 8
  %ow0 = mul i32 %w.tile, 32
  %20 = mul i32 %oh0, 1
  %ih0 = sub i32 %20, 0
  %21 = mul i32 %ow0, 1
  %iw0 = sub i32 %21, 0
  %22 = udiv i32 %C, 32
  %23 = icmp ugt i32 %22, 1
  %chunks = select i1 %23, i32 %22, i32 1
  %k.base = mul i32 %k.tile, 64
  %24 = zext i32 %x_bytes to i64
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %x, i16 0, i64 %24, i32 159744)
  %25 = zext i32 %w_bytes to i64
  %rsrc1 = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %w, i16 0, i64 %25, i32 159744)
  %xv0 = add i32 %tid.x, 0
  %26 = urem i32 %xv0, 4
  %27 = udiv i32 %xv0, 4
  %28 = urem i32 %27, 32
  %29 = udiv i32 %27, 32
  %30 = add i32 %ih0, %29
  %31 = add i32 %iw0, %28
  %32 = icmp ult i32 %30, %H
  %33 = icmp ult i32 %31, %W
  %34 = and i1 %32, %33
  %35 = mul i32 %n, %x_stride_n
  %36 = mul i32 %30, %x_stride_h
  %37 = add i32 %35, %36
  %38 = mul i32 %31, %x_stride_w
  %39 = add i32 %37, %38
  %40 = mul i32 %26, 8
  %41 = add i32 %40, 0
  %42 = add i32 %39, %41
  %43 = mul i32 %42, 2
  %x.goff0 = select i1 %34, i32 %43, i32 2130706432
  %44 = mul i32 %27, 40
  %45 = mul i32 %26, 8
  %46 = add i32 %44, %45
  %x.lds0 = mul i32 %46, 2
  %xv1 = add i32 %tid.x, 256
  %47 = urem i32 %xv1, 4
  %48 = udiv i32 %xv1, 4
  %49 = urem i32 %48, 32
  %50 = udiv i32 %48, 32
  %51 = add i32 %ih0, %50
  %52 = add i32 %iw0, %49
  %53 = icmp ult i32 %51, %H
  %54 = icmp ult i32 %52, %W
  %55 = and i1 %53, %54
  %56 = mul i32 %n, %x_stride_n
  %57 = mul i32 %51, %x_stride_h
  %58 = add i32 %56, %57
  %59 = mul i32 %52, %x_stride_w
  %60 = add i32 %58, %59
  %61 = mul i32 %47, 8
  %62 = add i32 %61, 0
  %63 = add i32 %60, %62
  %64 = mul i32 %63, 2
  %x.goff1 = select i1 %55, i32 %64, i32 2130706432
  %65 = add i32 %x.lds0, 5120
  %xv2 = add i32 %tid.x, 512
  %66 = urem i32 %xv2, 4
  %67 = udiv i32 %xv2, 4
  %68 = urem i32 %67, 32
  %69 = udiv i32 %67, 32
  %70 = add i32 %ih0, %69
  %71 = add i32 %iw0, %68
  %72 = icmp ult i32 %70, %H
  %73 = icmp ult i32 %71, %W
  %74 = and i1 %72, %73
  %75 = mul i32 %n, %x_stride_n
  %76 = mul i32 %70, %x_stride_h
  %77 = add i32 %75, %76
  %78 = mul i32 %71, %x_stride_w
  %79 = add i32 %77, %78
  %80 = mul i32 %66, 8
  %81 = add i32 %80, 0
  %82 = add i32 %79, %81
  %83 = mul i32 %82, 2
  %x.goff2 = select i1 %74, i32 %83, i32 2130706432
  %84 = add i32 %x.lds0, 10240
  %xv3 = add i32 %tid.x, 768
  %85 = urem i32 %xv3, 4
  %86 = udiv i32 %xv3, 4
  %87 = urem i32 %86, 32
  %88 = udiv i32 %86, 32
  %89 = add i32 %ih0, %88
  %90 = add i32 %iw0, %87
  %91 = icmp ult i32 %89, %H
  %92 = icmp ult i32 %90, %W
  %93 = and i1 %91, %92
  %94 = mul i32 %n, %x_stride_n
  %95 = mul i32 %89, %x_stride_h
  %96 = add i32 %94, %95
  %97 = mul i32 %90, %x_stride_w
  %98 = add i32 %96, %97
  %99 = mul i32 %85, 8
  %100 = add i32 %99, 0
  %101 = add i32 %98, %100
  %102 = mul i32 %101, 2
  %x.goff3 = select i1 %93, i32 %102, i32 2130706432
  %103 = add i32 %x.lds0, 15360
  %wv0 = add i32 %tid.x, 0
  %104 = urem i32 %wv0, 64
  %105 = udiv i32 %wv0, 64
  %106 = urem i32 %105, 2
  %107 = udiv i32 %105, 2
  %108 = urem i32 %107, 2
  %109 = udiv i32 %107, 2
  %110 = and i32 %104, 31
  %111 = lshr i32 %104, 5
  %112 = mul i32 %111, 8
  %113 = add i32 %112, 0
  %114 = mul i32 %108, 32
  %115 = add i32 %114, %110
  %116 = add i32 %k.base, %115
  %117 = mul i32 %106, 16
  %118 = add i32 %117, %113
  %119 = mul i32 %wv0, 8
  %120 = icmp ult i32 %116, %K
  %121 = mul i32 %116, 1
  %122 = add i32 %121, %109
  %123 = mul i32 %122, %C
  %124 = add i32 0, %118
  %125 = add i32 %124, 0
  %126 = add i32 %123, %125
  %127 = mul i32 %126, 2
  %w.goff0 = select i1 %120, i32 %127, i32 2130706432
  %w.lds0 = mul i32 %119, 2
  %x.wave = mul i32 %wave.n, 10240
  %m.tile0 = mul i32 %wave.m, 1
  %128 = lshr i32 %lane, 5
  %129 = mul i32 %128, 8
  %130 = add i32 %129, 0
  %131 = and i32 %lane, 31
  %132 = mul i32 %131, 40
  %133 = add i32 %132, %130
  %134 = mul i32 %133, 2
  %135 = add i32 %x.wave, %134
  %136 = mul i32 %m.tile0, 2048
  %137 = mul i32 %lane, 16
  %w.lane = add i32 %136, %137
  %138 = add i32 %x.goff0, 0
  %139 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %138, i32 0, i32 0)
  %140 = add i32 %x.goff1, 0
  %141 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %140, i32 0, i32 0)
  %142 = add i32 %x.goff2, 0
  %143 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %142, i32 0, i32 0)
  %144 = add i32 %x.goff3, 0
  %145 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %144, i32 0, i32 0)
  %146 = add i32 %w.goff0, 0
  %147 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc1, i32 %146, i32 0, i32 0)
  br label %chunk.header

chunk.header:
  %chunk.iv = phi i32 [ 0, %entry ], [ %chunk.next, %chunk.body ]
  %chunk.c0 = phi <16 x float> [ zeroinitializer, %entry ], [ %213, %chunk.body ]
  %chunk.c1 = phi <16 x float> [ zeroinitializer, %entry ], [ %214, %chunk.body ]
  %chunk.c2 = phi <16 x float> [ zeroinitializer, %entry ], [ %215, %chunk.body ]
  %chunk.c3 = phi <16 x float> [ zeroinitializer, %entry ], [ %216, %chunk.body ]
  %chunk.c4 = phi <8 x bfloat> [ %139, %entry ], [ %160, %chunk.body ]
  %chunk.c5 = phi <8 x bfloat> [ %141, %entry ], [ %162, %chunk.body ]
  %chunk.c6 = phi <8 x bfloat> [ %143, %entry ], [ %164, %chunk.body ]
  %chunk.c7 = phi <8 x bfloat> [ %145, %entry ], [ %166, %chunk.body ]
  %chunk.c8 = phi <8 x bfloat> [ %147, %entry ], [ %168, %chunk.body ]
  %chunk.cond = icmp slt i32 %chunk.iv, %chunks
  br i1 %chunk.cond, label %chunk.body, label %chunk.exit

chunk.body:
  call void @llvm.amdgcn.iglp.opt(i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %148 = add i32 0, %x.lds0
  %149 = getelementptr i8, ptr addrspace(3) @lds, i32 %148
  store <8 x bfloat> %chunk.c4, ptr addrspace(3) %149, align 16
  %150 = add i32 0, %65
  %151 = getelementptr i8, ptr addrspace(3) @lds, i32 %150
  store <8 x bfloat> %chunk.c5, ptr addrspace(3) %151, align 16
  %152 = add i32 0, %84
  %153 = getelementptr i8, ptr addrspace(3) @lds, i32 %152
  store <8 x bfloat> %chunk.c6, ptr addrspace(3) %153, align 16
  %154 = add i32 0, %103
  %155 = getelementptr i8, ptr addrspace(3) @lds, i32 %154
  store <8 x bfloat> %chunk.c7, ptr addrspace(3) %155, align 16
  %156 = add i32 20496, %w.lds0
  %157 = getelementptr i8, ptr addrspace(3) @lds, i32 %156
  store <8 x bfloat> %chunk.c8, ptr addrspace(3) %157, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %158 = add i32 %chunk.iv, 1
  %c.off = mul i32 %158, 64
  %159 = add i32 %x.goff0, %c.off
  %160 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %159, i32 0, i32 0)
  %161 = add i32 %x.goff1, %c.off
  %162 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %161, i32 0, i32 0)
  %163 = add i32 %x.goff2, %c.off
  %164 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %163, i32 0, i32 0)
  %165 = add i32 %x.goff3, %c.off
  %166 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc, i32 %165, i32 0, i32 0)
  %167 = add i32 %w.goff0, %c.off
  %168 = call <8 x bfloat> @llvm.amdgcn.raw.ptr.buffer.load.v8bf16(ptr addrspace(8) %rsrc1, i32 %167, i32 0, i32 0)
  %169 = add i32 0, %135
  %170 = add i32 %169, 0
  %171 = getelementptr i8, ptr addrspace(3) @lds, i32 %170
  %172 = load <8 x bfloat>, ptr addrspace(3) %171, align 16
  %173 = add i32 0, %135
  %174 = add i32 %173, 2560
  %175 = getelementptr i8, ptr addrspace(3) @lds, i32 %174
  %176 = load <8 x bfloat>, ptr addrspace(3) %175, align 16
  %177 = add i32 0, %135
  %178 = add i32 %177, 5120
  %179 = getelementptr i8, ptr addrspace(3) @lds, i32 %178
  %180 = load <8 x bfloat>, ptr addrspace(3) %179, align 16
  %181 = add i32 0, %135
  %182 = add i32 %181, 7680
  %183 = getelementptr i8, ptr addrspace(3) @lds, i32 %182
  %184 = load <8 x bfloat>, ptr addrspace(3) %183, align 16
  %185 = add i32 20496, %w.lane
  %186 = add i32 %185, 0
  %187 = getelementptr i8, ptr addrspace(3) @lds, i32 %186
  %188 = load <8 x bfloat>, ptr addrspace(3) %187, align 16
  %189 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %188, <8 x bfloat> %172, <16 x float> %chunk.c0, i32 0, i32 0, i32 0)
  %190 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %188, <8 x bfloat> %176, <16 x float> %chunk.c1, i32 0, i32 0, i32 0)
  %191 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %188, <8 x bfloat> %180, <16 x float> %chunk.c2, i32 0, i32 0, i32 0)
  %192 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %188, <8 x bfloat> %184, <16 x float> %chunk.c3, i32 0, i32 0, i32 0)
  %193 = add i32 0, %135
  %194 = add i32 %193, 32
  %195 = getelementptr i8, ptr addrspace(3) @lds, i32 %194
  %196 = load <8 x bfloat>, ptr addrspace(3) %195, align 16
  %197 = add i32 0, %135
  %198 = add i32 %197, 2592
  %199 = getelementptr i8, ptr addrspace(3) @lds, i32 %198
  %200 = load <8 x bfloat>, ptr addrspace(3) %199, align 16
  %201 = add i32 0, %135
  %202 = add i32 %201, 5152
  %203 = getelementptr i8, ptr addrspace(3) @lds, i32 %202
  %204 = load <8 x bfloat>, ptr addrspace(3) %203, align 16
  %205 = add i32 0, %135
  %206 = add i32 %205, 7712
  %207 = getelementptr i8, ptr addrspace(3) @lds, i32 %206
  %208 = load <8 x bfloat>, ptr addrspace(3) %207, align 16
  %209 = add i32 20496, %w.lane
  %210 = add i32 %209, 1024
  %211 = getelementptr i8, ptr addrspace(3) @lds, i32 %210
  %212 = load <8 x bfloat>, ptr addrspace(3) %211, align 16
  %213 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %212, <8 x bfloat> %196, <16 x float> %189, i32 0, i32 0, i32 0)
  %214 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %212, <8 x bfloat> %200, <16 x float> %190, i32 0, i32 0, i32 0)
  %215 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %212, <8 x bfloat> %204, <16 x float> %191, i32 0, i32 0, i32 0)
  %216 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %212, <8 x bfloat> %208, <16 x float> %192, i32 0, i32 0, i32 0)
  %chunk.next = add i32 %chunk.iv, 1
  br label %chunk.header

chunk.exit:
  %217 = lshr i32 %lane, 5
  %218 = mul i32 %217, 4
  %219 = add i32 %218, 0
  %220 = and i32 %lane, 31
  %221 = mul i32 %wave.n, 2
  %222 = mul i32 %221, 32
  %223 = add i32 %222, %220
  %224 = mul i32 %wave.m, 32
  %225 = add i32 %224, %219
  %226 = mul i32 %223, 72
  %227 = add i32 %226, %225
  %out.lds = mul i32 %227, 2
  %228 = lshr i32 %lane, 5
  %229 = mul i32 %228, 4
  %230 = add i32 %229, 8
  %231 = and i32 %lane, 31
  %232 = mul i32 %wave.n, 2
  %233 = mul i32 %232, 32
  %234 = add i32 %233, %231
  %235 = mul i32 %wave.m, 32
  %236 = add i32 %235, %230
  %237 = mul i32 %234, 72
  %238 = add i32 %237, %236
  %out.lds1 = mul i32 %238, 2
  %239 = lshr i32 %lane, 5
  %240 = mul i32 %239, 4
  %241 = add i32 %240, 16
  %242 = and i32 %lane, 31
  %243 = mul i32 %wave.n, 2
  %244 = mul i32 %243, 32
  %245 = add i32 %244, %242
  %246 = mul i32 %wave.m, 32
  %247 = add i32 %246, %241
  %248 = mul i32 %245, 72
  %249 = add i32 %248, %247
  %out.lds2 = mul i32 %249, 2
  %250 = lshr i32 %lane, 5
  %251 = mul i32 %250, 4
  %252 = add i32 %251, 24
  %253 = and i32 %lane, 31
  %254 = mul i32 %wave.n, 2
  %255 = mul i32 %254, 32
  %256 = add i32 %255, %253
  %257 = mul i32 %wave.m, 32
  %258 = add i32 %257, %252
  %259 = mul i32 %256, 72
  %260 = add i32 %259, %258
  %out.lds3 = mul i32 %260, 2
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %261 = shufflevector <16 x float> %chunk.c0, <16 x float> %chunk.c0, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %262 = fptrunc <4 x float> %261 to <4 x bfloat>
  %263 = add i32 %out.lds, 0
  %264 = getelementptr i8, ptr addrspace(3) @lds, i32 %263
  store <4 x bfloat> %262, ptr addrspace(3) %264, align 8
  %265 = shufflevector <16 x float> %chunk.c0, <16 x float> %chunk.c0, <4 x i32> <i32 4, i32 5, i32 6, i32 7>
  %266 = fptrunc <4 x float> %265 to <4 x bfloat>
  %267 = add i32 %out.lds1, 0
  %268 = getelementptr i8, ptr addrspace(3) @lds, i32 %267
  store <4 x bfloat> %266, ptr addrspace(3) %268, align 8
  %269 = shufflevector <16 x float> %chunk.c0, <16 x float> %chunk.c0, <4 x i32> <i32 8, i32 9, i32 10, i32 11>
  %270 = fptrunc <4 x float> %269 to <4 x bfloat>
  %271 = add i32 %out.lds2, 0
  %272 = getelementptr i8, ptr addrspace(3) @lds, i32 %271
  store <4 x bfloat> %270, ptr addrspace(3) %272, align 8
  %273 = shufflevector <16 x float> %chunk.c0, <16 x float> %chunk.c0, <4 x i32> <i32 12, i32 13, i32 14, i32 15>
  %274 = fptrunc <4 x float> %273 to <4 x bfloat>
  %275 = add i32 %out.lds3, 0
  %276 = getelementptr i8, ptr addrspace(3) @lds, i32 %275
  store <4 x bfloat> %274, ptr addrspace(3) %276, align 8
  %277 = shufflevector <16 x float> %chunk.c1, <16 x float> %chunk.c1, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %278 = fptrunc <4 x float> %277 to <4 x bfloat>
  %279 = add i32 %out.lds, 4608
  %280 = getelementptr i8, ptr addrspace(3) @lds, i32 %279
  store <4 x bfloat> %278, ptr addrspace(3) %280, align 8
  %281 = shufflevector <16 x float> %chunk.c1, <16 x float> %chunk.c1, <4 x i32> <i32 4, i32 5, i32 6, i32 7>
  %282 = fptrunc <4 x float> %281 to <4 x bfloat>
  %283 = add i32 %out.lds1, 4608
  %284 = getelementptr i8, ptr addrspace(3) @lds, i32 %283
  store <4 x bfloat> %282, ptr addrspace(3) %284, align 8
  %285 = shufflevector <16 x float> %chunk.c1, <16 x float> %chunk.c1, <4 x i32> <i32 8, i32 9, i32 10, i32 11>
  %286 = fptrunc <4 x float> %285 to <4 x bfloat>
  %287 = add i32 %out.lds2, 4608
  %288 = getelementptr i8, ptr addrspace(3) @lds, i32 %287
  store <4 x bfloat> %286, ptr addrspace(3) %288, align 8
  %289 = shufflevector <16 x float> %chunk.c1, <16 x float> %chunk.c1, <4 x i32> <i32 12, i32 13, i32 14, i32 15>
  %290 = fptrunc <4 x float> %289 to <4 x bfloat>
  %291 = add i32 %out.lds3, 4608
  %292 = getelementptr i8, ptr addrspace(3) @lds, i32 %291
  store <4 x bfloat> %290, ptr addrspace(3) %292, align 8
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %293 = zext i32 %y_bytes to i64
  %rsrc2 = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %y, i16 0, i64 %293, i32 159744)
  %y.image = mul i32 %n, %y_stride_n
  %out.v0 = add i32 %tid.x, 0
  %294 = urem i32 %out.v0, 8
  %295 = udiv i32 %out.v0, 8
  %296 = udiv i32 %295, 32
  %297 = udiv i32 %296, 2
  %298 = mul i32 %297, 4
  %299 = urem i32 %296, 2
  %300 = add i32 %299, 0
  %301 = add i32 %298, %300
  %302 = mul i32 %301, 32
  %303 = urem i32 %295, 32
  %out.tile.pixel = add i32 %302, %303
  %304 = udiv i32 %out.tile.pixel, 32
  %305 = add i32 %oh0, %304
  %306 = urem i32 %out.tile.pixel, 32
  %307 = add i32 %ow0, %306
  %308 = mul i32 %294, 8
  %309 = add i32 %k.base, %308
  %310 = icmp ult i32 %305, %Ho
  %311 = icmp ult i32 %307, %Wo
  %312 = icmp ult i32 %309, %K
  %313 = and i1 %311, %312
  %314 = and i1 %310, %313
  %315 = mul i32 %295, 72
  %316 = mul i32 %294, 8
  %317 = add i32 %315, %316
  %318 = mul i32 %317, 2
  %319 = getelementptr i8, ptr addrspace(3) @lds, i32 %318
  %320 = load <8 x bfloat>, ptr addrspace(3) %319, align 16
  %321 = mul i32 %305, %y_stride_h
  %322 = mul i32 %307, %y_stride_w
  %323 = add i32 %321, %322
  %324 = add i32 %y.image, %323
  %325 = add i32 %324, %309
  %326 = mul i32 %325, 2
  %327 = select i1 %314, i32 %326, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %320, ptr addrspace(8) %rsrc2, i32 %327, i32 0, i32 0)
  %out.v1 = add i32 %tid.x, 256
  %328 = urem i32 %out.v1, 8
  %329 = udiv i32 %out.v1, 8
  %330 = udiv i32 %329, 32
  %331 = udiv i32 %330, 2
  %332 = mul i32 %331, 4
  %333 = urem i32 %330, 2
  %334 = add i32 %333, 0
  %335 = add i32 %332, %334
  %336 = mul i32 %335, 32
  %337 = urem i32 %329, 32
  %out.tile.pixel1 = add i32 %336, %337
  %338 = udiv i32 %out.tile.pixel1, 32
  %339 = add i32 %oh0, %338
  %340 = urem i32 %out.tile.pixel1, 32
  %341 = add i32 %ow0, %340
  %342 = mul i32 %328, 8
  %343 = add i32 %k.base, %342
  %344 = icmp ult i32 %339, %Ho
  %345 = icmp ult i32 %341, %Wo
  %346 = icmp ult i32 %343, %K
  %347 = and i1 %345, %346
  %348 = and i1 %344, %347
  %349 = mul i32 %329, 72
  %350 = mul i32 %328, 8
  %351 = add i32 %349, %350
  %352 = mul i32 %351, 2
  %353 = getelementptr i8, ptr addrspace(3) @lds, i32 %352
  %354 = load <8 x bfloat>, ptr addrspace(3) %353, align 16
  %355 = mul i32 %339, %y_stride_h
  %356 = mul i32 %341, %y_stride_w
  %357 = add i32 %355, %356
  %358 = add i32 %y.image, %357
  %359 = add i32 %358, %343
  %360 = mul i32 %359, 2
  %361 = select i1 %348, i32 %360, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %354, ptr addrspace(8) %rsrc2, i32 %361, i32 0, i32 0)
  %out.v2 = add i32 %tid.x, 512
  %362 = urem i32 %out.v2, 8
  %363 = udiv i32 %out.v2, 8
  %364 = udiv i32 %363, 32
  %365 = udiv i32 %364, 2
  %366 = mul i32 %365, 4
  %367 = urem i32 %364, 2
  %368 = add i32 %367, 0
  %369 = add i32 %366, %368
  %370 = mul i32 %369, 32
  %371 = urem i32 %363, 32
  %out.tile.pixel2 = add i32 %370, %371
  %372 = udiv i32 %out.tile.pixel2, 32
  %373 = add i32 %oh0, %372
  %374 = urem i32 %out.tile.pixel2, 32
  %375 = add i32 %ow0, %374
  %376 = mul i32 %362, 8
  %377 = add i32 %k.base, %376
  %378 = icmp ult i32 %373, %Ho
  %379 = icmp ult i32 %375, %Wo
  %380 = icmp ult i32 %377, %K
  %381 = and i1 %379, %380
  %382 = and i1 %378, %381
  %383 = mul i32 %363, 72
  %384 = mul i32 %362, 8
  %385 = add i32 %383, %384
  %386 = mul i32 %385, 2
  %387 = getelementptr i8, ptr addrspace(3) @lds, i32 %386
  %388 = load <8 x bfloat>, ptr addrspace(3) %387, align 16
  %389 = mul i32 %373, %y_stride_h
  %390 = mul i32 %375, %y_stride_w
  %391 = add i32 %389, %390
  %392 = add i32 %y.image, %391
  %393 = add i32 %392, %377
  %394 = mul i32 %393, 2
  %395 = select i1 %382, i32 %394, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %388, ptr addrspace(8) %rsrc2, i32 %395, i32 0, i32 0)
  %out.v3 = add i32 %tid.x, 768
  %396 = urem i32 %out.v3, 8
  %397 = udiv i32 %out.v3, 8
  %398 = udiv i32 %397, 32
  %399 = udiv i32 %398, 2
  %400 = mul i32 %399, 4
  %401 = urem i32 %398, 2
  %402 = add i32 %401, 0
  %403 = add i32 %400, %402
  %404 = mul i32 %403, 32
  %405 = urem i32 %397, 32
  %out.tile.pixel3 = add i32 %404, %405
  %406 = udiv i32 %out.tile.pixel3, 32
  %407 = add i32 %oh0, %406
  %408 = urem i32 %out.tile.pixel3, 32
  %409 = add i32 %ow0, %408
  %410 = mul i32 %396, 8
  %411 = add i32 %k.base, %410
  %412 = icmp ult i32 %407, %Ho
  %413 = icmp ult i32 %409, %Wo
  %414 = icmp ult i32 %411, %K
  %415 = and i1 %413, %414
  %416 = and i1 %412, %415
  %417 = mul i32 %397, 72
  %418 = mul i32 %396, 8
  %419 = add i32 %417, %418
  %420 = mul i32 %419, 2
  %421 = getelementptr i8, ptr addrspace(3) @lds, i32 %420
  %422 = load <8 x bfloat>, ptr addrspace(3) %421, align 16
  %423 = mul i32 %407, %y_stride_h
  %424 = mul i32 %409, %y_stride_w
  %425 = add i32 %423, %424
  %426 = add i32 %y.image, %425
  %427 = add i32 %426, %411
  %428 = mul i32 %427, 2
  %429 = select i1 %416, i32 %428, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %422, ptr addrspace(8) %rsrc2, i32 %429, i32 0, i32 0)
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %430 = shufflevector <16 x float> %chunk.c2, <16 x float> %chunk.c2, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %431 = fptrunc <4 x float> %430 to <4 x bfloat>
  %432 = add i32 %out.lds, 0
  %433 = getelementptr i8, ptr addrspace(3) @lds, i32 %432
  store <4 x bfloat> %431, ptr addrspace(3) %433, align 8
  %434 = shufflevector <16 x float> %chunk.c2, <16 x float> %chunk.c2, <4 x i32> <i32 4, i32 5, i32 6, i32 7>
  %435 = fptrunc <4 x float> %434 to <4 x bfloat>
  %436 = add i32 %out.lds1, 0
  %437 = getelementptr i8, ptr addrspace(3) @lds, i32 %436
  store <4 x bfloat> %435, ptr addrspace(3) %437, align 8
  %438 = shufflevector <16 x float> %chunk.c2, <16 x float> %chunk.c2, <4 x i32> <i32 8, i32 9, i32 10, i32 11>
  %439 = fptrunc <4 x float> %438 to <4 x bfloat>
  %440 = add i32 %out.lds2, 0
  %441 = getelementptr i8, ptr addrspace(3) @lds, i32 %440
  store <4 x bfloat> %439, ptr addrspace(3) %441, align 8
  %442 = shufflevector <16 x float> %chunk.c2, <16 x float> %chunk.c2, <4 x i32> <i32 12, i32 13, i32 14, i32 15>
  %443 = fptrunc <4 x float> %442 to <4 x bfloat>
  %444 = add i32 %out.lds3, 0
  %445 = getelementptr i8, ptr addrspace(3) @lds, i32 %444
  store <4 x bfloat> %443, ptr addrspace(3) %445, align 8
  %446 = shufflevector <16 x float> %chunk.c3, <16 x float> %chunk.c3, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %447 = fptrunc <4 x float> %446 to <4 x bfloat>
  %448 = add i32 %out.lds, 4608
  %449 = getelementptr i8, ptr addrspace(3) @lds, i32 %448
  store <4 x bfloat> %447, ptr addrspace(3) %449, align 8
  %450 = shufflevector <16 x float> %chunk.c3, <16 x float> %chunk.c3, <4 x i32> <i32 4, i32 5, i32 6, i32 7>
  %451 = fptrunc <4 x float> %450 to <4 x bfloat>
  %452 = add i32 %out.lds1, 4608
  %453 = getelementptr i8, ptr addrspace(3) @lds, i32 %452
  store <4 x bfloat> %451, ptr addrspace(3) %453, align 8
  %454 = shufflevector <16 x float> %chunk.c3, <16 x float> %chunk.c3, <4 x i32> <i32 8, i32 9, i32 10, i32 11>
  %455 = fptrunc <4 x float> %454 to <4 x bfloat>
  %456 = add i32 %out.lds2, 4608
  %457 = getelementptr i8, ptr addrspace(3) @lds, i32 %456
  store <4 x bfloat> %455, ptr addrspace(3) %457, align 8
  %458 = shufflevector <16 x float> %chunk.c3, <16 x float> %chunk.c3, <4 x i32> <i32 12, i32 13, i32 14, i32 15>
  %459 = fptrunc <4 x float> %458 to <4 x bfloat>
  %460 = add i32 %out.lds3, 4608
  %461 = getelementptr i8, ptr addrspace(3) @lds, i32 %460
  store <4 x bfloat> %459, ptr addrspace(3) %461, align 8
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %out.v01 = add i32 %tid.x, 0
  %462 = urem i32 %out.v01, 8
  %463 = udiv i32 %out.v01, 8
  %464 = udiv i32 %463, 32
  %465 = udiv i32 %464, 2
  %466 = mul i32 %465, 4
  %467 = urem i32 %464, 2
  %468 = add i32 %467, 2
  %469 = add i32 %466, %468
  %470 = mul i32 %469, 32
  %471 = urem i32 %463, 32
  %out.tile.pixel4 = add i32 %470, %471
  %472 = udiv i32 %out.tile.pixel4, 32
  %473 = add i32 %oh0, %472
  %474 = urem i32 %out.tile.pixel4, 32
  %475 = add i32 %ow0, %474
  %476 = mul i32 %462, 8
  %477 = add i32 %k.base, %476
  %478 = icmp ult i32 %473, %Ho
  %479 = icmp ult i32 %475, %Wo
  %480 = icmp ult i32 %477, %K
  %481 = and i1 %479, %480
  %482 = and i1 %478, %481
  %483 = mul i32 %463, 72
  %484 = mul i32 %462, 8
  %485 = add i32 %483, %484
  %486 = mul i32 %485, 2
  %487 = getelementptr i8, ptr addrspace(3) @lds, i32 %486
  %488 = load <8 x bfloat>, ptr addrspace(3) %487, align 16
  %489 = mul i32 %473, %y_stride_h
  %490 = mul i32 %475, %y_stride_w
  %491 = add i32 %489, %490
  %492 = add i32 %y.image, %491
  %493 = add i32 %492, %477
  %494 = mul i32 %493, 2
  %495 = select i1 %482, i32 %494, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %488, ptr addrspace(8) %rsrc2, i32 %495, i32 0, i32 0)
  %out.v11 = add i32 %tid.x, 256
  %496 = urem i32 %out.v11, 8
  %497 = udiv i32 %out.v11, 8
  %498 = udiv i32 %497, 32
  %499 = udiv i32 %498, 2
  %500 = mul i32 %499, 4
  %501 = urem i32 %498, 2
  %502 = add i32 %501, 2
  %503 = add i32 %500, %502
  %504 = mul i32 %503, 32
  %505 = urem i32 %497, 32
  %out.tile.pixel5 = add i32 %504, %505
  %506 = udiv i32 %out.tile.pixel5, 32
  %507 = add i32 %oh0, %506
  %508 = urem i32 %out.tile.pixel5, 32
  %509 = add i32 %ow0, %508
  %510 = mul i32 %496, 8
  %511 = add i32 %k.base, %510
  %512 = icmp ult i32 %507, %Ho
  %513 = icmp ult i32 %509, %Wo
  %514 = icmp ult i32 %511, %K
  %515 = and i1 %513, %514
  %516 = and i1 %512, %515
  %517 = mul i32 %497, 72
  %518 = mul i32 %496, 8
  %519 = add i32 %517, %518
  %520 = mul i32 %519, 2
  %521 = getelementptr i8, ptr addrspace(3) @lds, i32 %520
  %522 = load <8 x bfloat>, ptr addrspace(3) %521, align 16
  %523 = mul i32 %507, %y_stride_h
  %524 = mul i32 %509, %y_stride_w
  %525 = add i32 %523, %524
  %526 = add i32 %y.image, %525
  %527 = add i32 %526, %511
  %528 = mul i32 %527, 2
  %529 = select i1 %516, i32 %528, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %522, ptr addrspace(8) %rsrc2, i32 %529, i32 0, i32 0)
  %out.v21 = add i32 %tid.x, 512
  %530 = urem i32 %out.v21, 8
  %531 = udiv i32 %out.v21, 8
  %532 = udiv i32 %531, 32
  %533 = udiv i32 %532, 2
  %534 = mul i32 %533, 4
  %535 = urem i32 %532, 2
  %536 = add i32 %535, 2
  %537 = add i32 %534, %536
  %538 = mul i32 %537, 32
  %539 = urem i32 %531, 32
  %out.tile.pixel6 = add i32 %538, %539
  %540 = udiv i32 %out.tile.pixel6, 32
  %541 = add i32 %oh0, %540
  %542 = urem i32 %out.tile.pixel6, 32
  %543 = add i32 %ow0, %542
  %544 = mul i32 %530, 8
  %545 = add i32 %k.base, %544
  %546 = icmp ult i32 %541, %Ho
  %547 = icmp ult i32 %543, %Wo
  %548 = icmp ult i32 %545, %K
  %549 = and i1 %547, %548
  %550 = and i1 %546, %549
  %551 = mul i32 %531, 72
  %552 = mul i32 %530, 8
  %553 = add i32 %551, %552
  %554 = mul i32 %553, 2
  %555 = getelementptr i8, ptr addrspace(3) @lds, i32 %554
  %556 = load <8 x bfloat>, ptr addrspace(3) %555, align 16
  %557 = mul i32 %541, %y_stride_h
  %558 = mul i32 %543, %y_stride_w
  %559 = add i32 %557, %558
  %560 = add i32 %y.image, %559
  %561 = add i32 %560, %545
  %562 = mul i32 %561, 2
  %563 = select i1 %550, i32 %562, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %556, ptr addrspace(8) %rsrc2, i32 %563, i32 0, i32 0)
  %out.v31 = add i32 %tid.x, 768
  %564 = urem i32 %out.v31, 8
  %565 = udiv i32 %out.v31, 8
  %566 = udiv i32 %565, 32
  %567 = udiv i32 %566, 2
  %568 = mul i32 %567, 4
  %569 = urem i32 %566, 2
  %570 = add i32 %569, 2
  %571 = add i32 %568, %570
  %572 = mul i32 %571, 32
  %573 = urem i32 %565, 32
  %out.tile.pixel7 = add i32 %572, %573
  %574 = udiv i32 %out.tile.pixel7, 32
  %575 = add i32 %oh0, %574
  %576 = urem i32 %out.tile.pixel7, 32
  %577 = add i32 %ow0, %576
  %578 = mul i32 %564, 8
  %579 = add i32 %k.base, %578
  %580 = icmp ult i32 %575, %Ho
  %581 = icmp ult i32 %577, %Wo
  %582 = icmp ult i32 %579, %K
  %583 = and i1 %581, %582
  %584 = and i1 %580, %583
  %585 = mul i32 %565, 72
  %586 = mul i32 %564, 8
  %587 = add i32 %585, %586
  %588 = mul i32 %587, 2
  %589 = getelementptr i8, ptr addrspace(3) @lds, i32 %588
  %590 = load <8 x bfloat>, ptr addrspace(3) %589, align 16
  %591 = mul i32 %575, %y_stride_h
  %592 = mul i32 %577, %y_stride_w
  %593 = add i32 %591, %592
  %594 = add i32 %y.image, %593
  %595 = add i32 %594, %579
  %596 = mul i32 %595, 2
  %597 = select i1 %584, i32 %596, i32 2130706432
  call void @llvm.amdgcn.raw.ptr.buffer.store.v8bf16(<8 x bfloat> %590, ptr addrspace(8) %rsrc2, i32 %597, i32 0, i32 0)
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" "uniform-work-group-size"="true" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
