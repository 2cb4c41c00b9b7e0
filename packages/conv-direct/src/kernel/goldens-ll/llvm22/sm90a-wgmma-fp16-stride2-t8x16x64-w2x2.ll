target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@lds = external addrspace(3) global [0 x i8], align 128

declare void @llvm.nvvm.griddepcontrol.wait()
declare void @llvm.nvvm.griddepcontrol.launch.dependents()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32)
declare void @llvm.nvvm.fence.proxy.async.shared_cta()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare void @llvm.nvvm.wgmma.fence.sync.aligned()
declare void @llvm.nvvm.wgmma.commit_group.sync.aligned()
declare void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64)

define ptx_kernel void @rocke_direct_dense_sm_90_fp16_r3s3_u2v2_p1q1_t8x16x64_ck16_w2x2_am64nNk16_lp0_db_cs0x1x64_wgm8(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %w, ptr addrspace(1) noalias %y, i32 %x_bytes, i32 %w_bytes, i32 %y_bytes, i32 %N, i32 %H, i32 %W, i32 %Ho, i32 %Wo, i32 %groups, i32 %C, i32 %K, i32 %x_stride_n, i32 %x_stride_h, i32 %x_stride_w, i32 %y_stride_n, i32 %y_stride_h, i32 %y_stride_w) #0 {
entry:
  call void @llvm.nvvm.griddepcontrol.wait()
  call void @llvm.nvvm.griddepcontrol.launch.dependents()
  %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %wg = lshr i32 %tid.x, 7
  %wg.m = urem i32 %wg, 2
  %wg.n = udiv i32 %wg, 2
  %0 = add i32 %Wo, 15
  %w.tiles = udiv i32 %0, 16
  %1 = add i32 %Ho, 7
  %h.tiles = udiv i32 %1, 8
  %2 = add i32 %K, 63
  %k.tiles = udiv i32 %2, 64
  %cells.per.image = mul i32 %w.tiles, %h.tiles
  %cells = mul i32 %cells.per.image, %N
  %wgid.x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %wg.span = mul i32 %cells, 8
  %3 = udiv i32 %wgid.x, %wg.span
  %4 = mul i32 %3, 8
  %5 = sub i32 %k.tiles, %4
  %6 = icmp ult i32 %5, 8
  %wg.gsize = select i1 %6, i32 %5, i32 8
  %7 = urem i32 %wgid.x, %wg.span
  %8 = urem i32 %7, %wg.gsize
  %k.tile = add i32 %4, %8
  %cell = udiv i32 %7, %wg.gsize
  %n = udiv i32 %cell, %cells.per.image
  %9 = urem i32 %cell, %cells.per.image
  %w.tile = urem i32 %9, %w.tiles
  %h.tile = udiv i32 %9, %w.tiles
  %oh0 = mul i32 %h.tile, 8
  %ow0 = mul i32 %w.tile, 16
  %10 = mul i32 %oh0, 2
  %ih0 = sub i32 %10, 1
  %11 = mul i32 %ow0, 2
  %iw0 = sub i32 %11, 1
  %12 = udiv i32 %C, 16
  %13 = icmp ugt i32 %12, 1
  %chunks = select i1 %13, i32 %12, i32 1
  %k.base = mul i32 %k.tile, 64
  %14 = zext i32 %x_bytes to i64
  %15 = zext i32 %w_bytes to i64
  %xv0 = add i32 %tid.x, 0
  %16 = urem i32 %xv0, 2
  %17 = udiv i32 %xv0, 2
  %18 = urem i32 %17, 33
  %19 = udiv i32 %17, 33
  %20 = add i32 %ih0, %19
  %21 = add i32 %iw0, %18
  %22 = icmp ult i32 %20, %H
  %23 = icmp ult i32 %21, %W
  %24 = and i1 %22, %23
  %25 = mul i32 %n, %x_stride_n
  %26 = mul i32 %20, %x_stride_h
  %27 = add i32 %25, %26
  %28 = mul i32 %21, %x_stride_w
  %29 = add i32 %27, %28
  %30 = mul i32 %16, 8
  %31 = add i32 %30, 0
  %32 = add i32 %29, %31
  %33 = mul i32 %32, 2
  %x.goff0 = select i1 %24, i32 %33, i32 2130706432
  %34 = and i32 %18, 1
  %35 = mul i32 %34, 17
  %36 = lshr i32 %18, 1
  %37 = add i32 %35, %36
  %38 = mul i32 %16, 9248
  %39 = mul i32 %19, 34
  %40 = add i32 %39, %37
  %41 = mul i32 %40, 16
  %x.lds0 = add i32 %38, %41
  %xv1 = add i32 %tid.x, 512
  %42 = urem i32 %xv1, 2
  %43 = udiv i32 %xv1, 2
  %44 = urem i32 %43, 33
  %45 = udiv i32 %43, 33
  %46 = add i32 %ih0, %45
  %47 = add i32 %iw0, %44
  %48 = icmp ult i32 %46, %H
  %49 = icmp ult i32 %47, %W
  %50 = and i1 %48, %49
  %51 = mul i32 %n, %x_stride_n
  %52 = mul i32 %46, %x_stride_h
  %53 = add i32 %51, %52
  %54 = mul i32 %47, %x_stride_w
  %55 = add i32 %53, %54
  %56 = mul i32 %42, 8
  %57 = add i32 %56, 0
  %58 = add i32 %55, %57
  %59 = mul i32 %58, 2
  %x.goff1 = select i1 %50, i32 %59, i32 2130706432
  %60 = and i32 %44, 1
  %61 = mul i32 %60, 17
  %62 = lshr i32 %44, 1
  %63 = add i32 %61, %62
  %64 = mul i32 %42, 9248
  %65 = mul i32 %45, 34
  %66 = add i32 %65, %63
  %67 = mul i32 %66, 16
  %x.lds1 = add i32 %64, %67
  %xv2 = add i32 %tid.x, 1024
  %68 = urem i32 %xv2, 2
  %69 = udiv i32 %xv2, 2
  %70 = urem i32 %69, 33
  %71 = udiv i32 %69, 33
  %72 = add i32 %ih0, %71
  %73 = add i32 %iw0, %70
  %74 = icmp ult i32 %72, %H
  %75 = icmp ult i32 %73, %W
  %76 = and i1 %74, %75
  %77 = icmp ult i32 %xv2, 1122
  %78 = and i1 %76, %77
  %79 = mul i32 %n, %x_stride_n
  %80 = mul i32 %72, %x_stride_h
  %81 = add i32 %79, %80
  %82 = mul i32 %73, %x_stride_w
  %83 = add i32 %81, %82
  %84 = mul i32 %68, 8
  %85 = add i32 %84, 0
  %86 = add i32 %83, %85
  %87 = mul i32 %86, 2
  %x.goff2 = select i1 %78, i32 %87, i32 2130706432
  %88 = and i32 %70, 1
  %89 = mul i32 %88, 17
  %90 = lshr i32 %70, 1
  %91 = add i32 %89, %90
  %92 = mul i32 %68, 9248
  %93 = mul i32 %71, 34
  %94 = add i32 %93, %91
  %95 = mul i32 %94, 16
  %x.lds2 = add i32 %92, %95
  %wv0 = add i32 %tid.x, 0
  %96 = urem i32 %wv0, 2
  %97 = udiv i32 %wv0, 2
  %98 = urem i32 %97, 64
  %99 = udiv i32 %97, 64
  %100 = add i32 %k.base, %98
  %101 = icmp ult i32 %100, %K
  %102 = mul i32 %100, 9
  %103 = add i32 %102, %99
  %104 = mul i32 %103, %C
  %105 = mul i32 %96, 8
  %106 = add i32 %105, 0
  %107 = add i32 %104, %106
  %108 = mul i32 %107, 2
  %w.goff0 = select i1 %101, i32 %108, i32 2130706432
  %109 = mul i32 %99, 2
  %110 = add i32 %109, %96
  %111 = mul i32 %110, 64
  %112 = add i32 %111, %98
  %w.lds0 = mul i32 %112, 16
  %wv1 = add i32 %tid.x, 512
  %113 = urem i32 %wv1, 2
  %114 = udiv i32 %wv1, 2
  %115 = urem i32 %114, 64
  %116 = udiv i32 %114, 64
  %117 = add i32 %k.base, %115
  %118 = icmp ult i32 %117, %K
  %119 = mul i32 %117, 9
  %120 = add i32 %119, %116
  %121 = mul i32 %120, %C
  %122 = mul i32 %113, 8
  %123 = add i32 %122, 0
  %124 = add i32 %121, %123
  %125 = mul i32 %124, 2
  %w.goff1 = select i1 %118, i32 %125, i32 2130706432
  %126 = mul i32 %116, 2
  %127 = add i32 %126, %113
  %128 = mul i32 %127, 64
  %129 = add i32 %128, %115
  %w.lds1 = mul i32 %129, 16
  %wv2 = add i32 %tid.x, 1024
  %130 = urem i32 %wv2, 2
  %131 = udiv i32 %wv2, 2
  %132 = urem i32 %131, 64
  %133 = udiv i32 %131, 64
  %134 = add i32 %k.base, %132
  %135 = icmp ult i32 %wv2, 1152
  %136 = icmp ult i32 %134, %K
  %137 = and i1 %136, %135
  %138 = mul i32 %134, 9
  %139 = add i32 %138, %133
  %140 = mul i32 %139, %C
  %141 = mul i32 %130, 8
  %142 = add i32 %141, 0
  %143 = add i32 %140, %142
  %144 = mul i32 %143, 2
  %w.goff2 = select i1 %137, i32 %144, i32 2130706432
  %145 = mul i32 %133, 2
  %146 = add i32 %145, %130
  %147 = mul i32 %146, 64
  %148 = add i32 %147, %132
  %w.lds2 = mul i32 %148, 16
  %149 = mul i32 %wg.n, 1
  %150 = add i32 %149, 0
  %151 = udiv i32 %150, 2
  %152 = urem i32 %150, 2
  %153 = mul i32 %151, 16
  %154 = mul i32 %153, 34
  %155 = mul i32 %152, 8
  %156 = add i32 %154, %155
  %x.block0 = mul i32 %156, 16
  %157 = mul i32 %wg.m, 512
  %158 = icmp ult i32 0, %chunks
  %c.off = select i1 %158, i32 0, i32 2130706432
  %159 = add i32 %x.goff0, %c.off
  %160 = add i32 0, %x.lds0
  %161 = getelementptr i8, ptr addrspace(3) @lds, i32 %160
  %162 = zext i32 %159 to i64
  %163 = add i64 %162, 16
  %in.range = icmp ule i64 %163, %14
  %164 = getelementptr i8, ptr addrspace(1) %x, i64 %162
  %165 = select i1 %in.range, ptr addrspace(1) %164, ptr addrspace(1) %x
  %166 = select i1 %in.range, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %161, ptr addrspace(1) %165, i32 %166)
  %167 = add i32 %x.goff1, %c.off
  %168 = add i32 0, %x.lds1
  %169 = getelementptr i8, ptr addrspace(3) @lds, i32 %168
  %170 = zext i32 %167 to i64
  %171 = add i64 %170, 16
  %in.range1 = icmp ule i64 %171, %14
  %172 = getelementptr i8, ptr addrspace(1) %x, i64 %170
  %173 = select i1 %in.range1, ptr addrspace(1) %172, ptr addrspace(1) %x
  %174 = select i1 %in.range1, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %169, ptr addrspace(1) %173, i32 %174)
  br i1 %77, label %stage.tail.then, label %stage.tail.end

stage.tail.then:
  %175 = add i32 %x.goff2, %c.off
  %176 = add i32 0, %x.lds2
  %177 = getelementptr i8, ptr addrspace(3) @lds, i32 %176
  %178 = zext i32 %175 to i64
  %179 = add i64 %178, 16
  %in.range2 = icmp ule i64 %179, %14
  %180 = getelementptr i8, ptr addrspace(1) %x, i64 %178
  %181 = select i1 %in.range2, ptr addrspace(1) %180, ptr addrspace(1) %x
  %182 = select i1 %in.range2, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %177, ptr addrspace(1) %181, i32 %182)
  br label %stage.tail.end

stage.tail.end:
  %183 = add i32 %w.goff0, %c.off
  %184 = add i32 55488, %w.lds0
  %185 = getelementptr i8, ptr addrspace(3) @lds, i32 %184
  %186 = zext i32 %183 to i64
  %187 = add i64 %186, 16
  %in.range3 = icmp ule i64 %187, %15
  %188 = getelementptr i8, ptr addrspace(1) %w, i64 %186
  %189 = select i1 %in.range3, ptr addrspace(1) %188, ptr addrspace(1) %w
  %190 = select i1 %in.range3, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %185, ptr addrspace(1) %189, i32 %190)
  %191 = add i32 %w.goff1, %c.off
  %192 = add i32 55488, %w.lds1
  %193 = getelementptr i8, ptr addrspace(3) @lds, i32 %192
  %194 = zext i32 %191 to i64
  %195 = add i64 %194, 16
  %in.range4 = icmp ule i64 %195, %15
  %196 = getelementptr i8, ptr addrspace(1) %w, i64 %194
  %197 = select i1 %in.range4, ptr addrspace(1) %196, ptr addrspace(1) %w
  %198 = select i1 %in.range4, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %193, ptr addrspace(1) %197, i32 %198)
  br i1 %135, label %stage.tail.then1, label %stage.tail.end1

stage.tail.then1:
  %199 = add i32 %w.goff2, %c.off
  %200 = add i32 55488, %w.lds2
  %201 = getelementptr i8, ptr addrspace(3) @lds, i32 %200
  %202 = zext i32 %199 to i64
  %203 = add i64 %202, 16
  %in.range5 = icmp ule i64 %203, %15
  %204 = getelementptr i8, ptr addrspace(1) %w, i64 %202
  %205 = select i1 %in.range5, ptr addrspace(1) %204, ptr addrspace(1) %w
  %206 = select i1 %in.range5, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %201, ptr addrspace(1) %205, i32 %206)
  br label %stage.tail.end1

stage.tail.end1:
  call void @llvm.nvvm.cp.async.commit.group()
  br label %chunk.header

chunk.header:
  %chunk.iv = phi i32 [ 0, %stage.tail.end1 ], [ %chunk.next, %stage.tail.end3 ]
  %chunk.c0 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %367, %stage.tail.end3 ]
  %chunk.c1 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %368, %stage.tail.end3 ]
  %chunk.c2 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %369, %stage.tail.end3 ]
  %chunk.c3 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %370, %stage.tail.end3 ]
  %chunk.c4 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %371, %stage.tail.end3 ]
  %chunk.c5 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %372, %stage.tail.end3 ]
  %chunk.c6 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %373, %stage.tail.end3 ]
  %chunk.c7 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %374, %stage.tail.end3 ]
  %chunk.c8 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %375, %stage.tail.end3 ]
  %chunk.c9 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %376, %stage.tail.end3 ]
  %chunk.c10 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %377, %stage.tail.end3 ]
  %chunk.c11 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %378, %stage.tail.end3 ]
  %chunk.c12 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %379, %stage.tail.end3 ]
  %chunk.c13 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %380, %stage.tail.end3 ]
  %chunk.c14 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %381, %stage.tail.end3 ]
  %chunk.c15 = phi float [ 0x0000000000000000, %stage.tail.end1 ], [ %382, %stage.tail.end3 ]
  %chunk.cond = icmp slt i32 %chunk.iv, %chunks
  br i1 %chunk.cond, label %chunk.body, label %chunk.exit

chunk.body:
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  call void @llvm.nvvm.fence.proxy.async.shared_cta()
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %stage = urem i32 %chunk.iv, 3
  %207 = add i32 %chunk.iv, 1
  %208 = mul i32 %stage, 18496
  %209 = mul i32 %stage, 18432
  %210 = add i32 %209, 55488
  %211 = add i32 %208, %x.block0
  %212 = getelementptr i8, ptr addrspace(3) @lds, i32 %211
  %213 = ptrtoint ptr addrspace(3) %212 to i64
  %214 = and i64 %213, 262143
  %215 = lshr i64 %214, 4
  %wgmma.desc = or i64 %215, 292095655936
  %216 = add i32 %210, %157
  %217 = getelementptr i8, ptr addrspace(3) @lds, i32 %216
  %218 = ptrtoint ptr addrspace(3) %217 to i64
  %219 = and i64 %218, 262143
  %220 = lshr i64 %219, 4
  %wgmma.desc1 = or i64 %220, 34363932672
  call void @llvm.nvvm.wgmma.fence.sync.aligned()
  %221 = add i64 %wgmma.desc1, 0
  %222 = add i64 %wgmma.desc, 0
  %wgmma = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %222, i64 %221, i32 1, float %chunk.c0, float %chunk.c1, float %chunk.c2, float %chunk.c3, float %chunk.c4, float %chunk.c5, float %chunk.c6, float %chunk.c7, float %chunk.c8, float %chunk.c9, float %chunk.c10, float %chunk.c11, float %chunk.c12, float %chunk.c13, float %chunk.c14, float %chunk.c15)
  %223 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 0
  %224 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 1
  %225 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 2
  %226 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 3
  %227 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 4
  %228 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 5
  %229 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 6
  %230 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 7
  %231 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 8
  %232 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 9
  %233 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 10
  %234 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 11
  %235 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 12
  %236 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 13
  %237 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 14
  %238 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma, 15
  %239 = add i64 %wgmma.desc1, 128
  %240 = add i64 %wgmma.desc, 17
  %wgmma1 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %240, i64 %239, i32 1, float %223, float %224, float %225, float %226, float %227, float %228, float %229, float %230, float %231, float %232, float %233, float %234, float %235, float %236, float %237, float %238)
  %241 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 0
  %242 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 1
  %243 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 2
  %244 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 3
  %245 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 4
  %246 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 5
  %247 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 6
  %248 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 7
  %249 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 8
  %250 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 9
  %251 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 10
  %252 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 11
  %253 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 12
  %254 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 13
  %255 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 14
  %256 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma1, 15
  %257 = add i64 %wgmma.desc1, 256
  %258 = add i64 %wgmma.desc, 1
  %wgmma2 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %258, i64 %257, i32 1, float %241, float %242, float %243, float %244, float %245, float %246, float %247, float %248, float %249, float %250, float %251, float %252, float %253, float %254, float %255, float %256)
  %259 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 0
  %260 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 1
  %261 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 2
  %262 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 3
  %263 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 4
  %264 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 5
  %265 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 6
  %266 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 7
  %267 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 8
  %268 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 9
  %269 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 10
  %270 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 11
  %271 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 12
  %272 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 13
  %273 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 14
  %274 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma2, 15
  %275 = add i64 %wgmma.desc1, 384
  %276 = add i64 %wgmma.desc, 34
  %wgmma3 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %276, i64 %275, i32 1, float %259, float %260, float %261, float %262, float %263, float %264, float %265, float %266, float %267, float %268, float %269, float %270, float %271, float %272, float %273, float %274)
  %277 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 0
  %278 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 1
  %279 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 2
  %280 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 3
  %281 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 4
  %282 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 5
  %283 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 6
  %284 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 7
  %285 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 8
  %286 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 9
  %287 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 10
  %288 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 11
  %289 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 12
  %290 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 13
  %291 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 14
  %292 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma3, 15
  %293 = add i64 %wgmma.desc1, 512
  %294 = add i64 %wgmma.desc, 51
  %wgmma4 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %294, i64 %293, i32 1, float %277, float %278, float %279, float %280, float %281, float %282, float %283, float %284, float %285, float %286, float %287, float %288, float %289, float %290, float %291, float %292)
  %295 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 0
  %296 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 1
  %297 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 2
  %298 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 3
  %299 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 4
  %300 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 5
  %301 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 6
  %302 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 7
  %303 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 8
  %304 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 9
  %305 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 10
  %306 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 11
  %307 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 12
  %308 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 13
  %309 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 14
  %310 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma4, 15
  %311 = add i64 %wgmma.desc1, 640
  %312 = add i64 %wgmma.desc, 35
  %wgmma5 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %312, i64 %311, i32 1, float %295, float %296, float %297, float %298, float %299, float %300, float %301, float %302, float %303, float %304, float %305, float %306, float %307, float %308, float %309, float %310)
  %313 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 0
  %314 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 1
  %315 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 2
  %316 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 3
  %317 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 4
  %318 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 5
  %319 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 6
  %320 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 7
  %321 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 8
  %322 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 9
  %323 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 10
  %324 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 11
  %325 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 12
  %326 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 13
  %327 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 14
  %328 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma5, 15
  %329 = add i64 %wgmma.desc1, 768
  %330 = add i64 %wgmma.desc, 68
  %wgmma6 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %330, i64 %329, i32 1, float %313, float %314, float %315, float %316, float %317, float %318, float %319, float %320, float %321, float %322, float %323, float %324, float %325, float %326, float %327, float %328)
  %331 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 0
  %332 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 1
  %333 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 2
  %334 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 3
  %335 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 4
  %336 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 5
  %337 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 6
  %338 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 7
  %339 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 8
  %340 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 9
  %341 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 10
  %342 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 11
  %343 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 12
  %344 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 13
  %345 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 14
  %346 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma6, 15
  %347 = add i64 %wgmma.desc1, 896
  %348 = add i64 %wgmma.desc, 85
  %wgmma7 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %348, i64 %347, i32 1, float %331, float %332, float %333, float %334, float %335, float %336, float %337, float %338, float %339, float %340, float %341, float %342, float %343, float %344, float %345, float %346)
  %349 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 0
  %350 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 1
  %351 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 2
  %352 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 3
  %353 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 4
  %354 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 5
  %355 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 6
  %356 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 7
  %357 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 8
  %358 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 9
  %359 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 10
  %360 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 11
  %361 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 12
  %362 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 13
  %363 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 14
  %364 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma7, 15
  %365 = add i64 %wgmma.desc1, 1024
  %366 = add i64 %wgmma.desc, 69
  %wgmma8 = call { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } asm sideeffect "{ .reg .pred p; setp.ne.b32 p, $18, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, $16, $17, p, 1, 1, 0, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,l,l,r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"(i64 %366, i64 %365, i32 1, float %349, float %350, float %351, float %352, float %353, float %354, float %355, float %356, float %357, float %358, float %359, float %360, float %361, float %362, float %363, float %364)
  %367 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 0
  %368 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 1
  %369 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 2
  %370 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 3
  %371 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 4
  %372 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 5
  %373 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 6
  %374 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 7
  %375 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 8
  %376 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 9
  %377 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 10
  %378 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 11
  %379 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 12
  %380 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 13
  %381 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 14
  %382 = extractvalue { float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float } %wgmma8, 15
  call void @llvm.nvvm.wgmma.commit_group.sync.aligned()
  %383 = urem i32 %207, 3
  %384 = icmp ult i32 %207, %chunks
  %385 = mul i32 %207, 32
  %c.off1 = select i1 %384, i32 %385, i32 2130706432
  %386 = mul i32 %383, 18496
  %387 = mul i32 %383, 18432
  %388 = add i32 %387, 55488
  %389 = add i32 %x.goff0, %c.off1
  %390 = add i32 %386, %x.lds0
  %391 = getelementptr i8, ptr addrspace(3) @lds, i32 %390
  %392 = zext i32 %389 to i64
  %393 = add i64 %392, 16
  %in.range6 = icmp ule i64 %393, %14
  %394 = getelementptr i8, ptr addrspace(1) %x, i64 %392
  %395 = select i1 %in.range6, ptr addrspace(1) %394, ptr addrspace(1) %x
  %396 = select i1 %in.range6, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %391, ptr addrspace(1) %395, i32 %396)
  %397 = add i32 %x.goff1, %c.off1
  %398 = add i32 %386, %x.lds1
  %399 = getelementptr i8, ptr addrspace(3) @lds, i32 %398
  %400 = zext i32 %397 to i64
  %401 = add i64 %400, 16
  %in.range7 = icmp ule i64 %401, %14
  %402 = getelementptr i8, ptr addrspace(1) %x, i64 %400
  %403 = select i1 %in.range7, ptr addrspace(1) %402, ptr addrspace(1) %x
  %404 = select i1 %in.range7, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %399, ptr addrspace(1) %403, i32 %404)
  br i1 %77, label %stage.tail.then2, label %stage.tail.end2

chunk.exit:
  call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 0)
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  %405 = lshr i32 %tid.x, 5
  %warp = and i32 %405, 3
  %lane = and i32 %tid.x, 31
  %406 = mul i32 %warp, 2
  %407 = mul i32 %406, 16
  %408 = lshr i32 %lane, 2
  %409 = add i32 %407, %408
  %410 = mul i32 %wg.m, 32
  %411 = and i32 %lane, 3
  %412 = mul i32 %411, 2
  %413 = add i32 %410, %412
  %414 = mul i32 %409, 72
  %415 = add i32 %414, %413
  %out.lds.lane = mul i32 %415, 2
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %416 = mul i32 %wg.n, 1
  %417 = add i32 %416, 0
  %418 = udiv i32 %417, 2
  %419 = urem i32 %417, 2
  %420 = mul i32 %418, 8
  %421 = mul i32 %420, 16
  %422 = mul i32 %419, 8
  %423 = add i32 %421, %422
  %424 = mul i32 %423, 144
  %out.lds.b0 = add i32 %out.lds.lane, %424
  %425 = insertelement <2 x float> poison, float %chunk.c0, i32 0
  %426 = insertelement <2 x float> %425, float %chunk.c1, i32 1
  %427 = fptrunc <2 x float> %426 to <2 x half>
  %428 = add i32 %out.lds.b0, 0
  %429 = getelementptr i8, ptr addrspace(3) @lds, i32 %428
  store <2 x half> %427, ptr addrspace(3) %429, align 4
  %430 = insertelement <2 x float> poison, float %chunk.c4, i32 0
  %431 = insertelement <2 x float> %430, float %chunk.c5, i32 1
  %432 = fptrunc <2 x float> %431 to <2 x half>
  %433 = add i32 %out.lds.b0, 16
  %434 = getelementptr i8, ptr addrspace(3) @lds, i32 %433
  store <2 x half> %432, ptr addrspace(3) %434, align 4
  %435 = insertelement <2 x float> poison, float %chunk.c8, i32 0
  %436 = insertelement <2 x float> %435, float %chunk.c9, i32 1
  %437 = fptrunc <2 x float> %436 to <2 x half>
  %438 = add i32 %out.lds.b0, 32
  %439 = getelementptr i8, ptr addrspace(3) @lds, i32 %438
  store <2 x half> %437, ptr addrspace(3) %439, align 4
  %440 = insertelement <2 x float> poison, float %chunk.c12, i32 0
  %441 = insertelement <2 x float> %440, float %chunk.c13, i32 1
  %442 = fptrunc <2 x float> %441 to <2 x half>
  %443 = add i32 %out.lds.b0, 48
  %444 = getelementptr i8, ptr addrspace(3) @lds, i32 %443
  store <2 x half> %442, ptr addrspace(3) %444, align 4
  %445 = insertelement <2 x float> poison, float %chunk.c2, i32 0
  %446 = insertelement <2 x float> %445, float %chunk.c3, i32 1
  %447 = fptrunc <2 x float> %446 to <2 x half>
  %448 = add i32 %out.lds.b0, 2304
  %449 = getelementptr i8, ptr addrspace(3) @lds, i32 %448
  store <2 x half> %447, ptr addrspace(3) %449, align 4
  %450 = insertelement <2 x float> poison, float %chunk.c6, i32 0
  %451 = insertelement <2 x float> %450, float %chunk.c7, i32 1
  %452 = fptrunc <2 x float> %451 to <2 x half>
  %453 = add i32 %out.lds.b0, 2320
  %454 = getelementptr i8, ptr addrspace(3) @lds, i32 %453
  store <2 x half> %452, ptr addrspace(3) %454, align 4
  %455 = insertelement <2 x float> poison, float %chunk.c10, i32 0
  %456 = insertelement <2 x float> %455, float %chunk.c11, i32 1
  %457 = fptrunc <2 x float> %456 to <2 x half>
  %458 = add i32 %out.lds.b0, 2336
  %459 = getelementptr i8, ptr addrspace(3) @lds, i32 %458
  store <2 x half> %457, ptr addrspace(3) %459, align 4
  %460 = insertelement <2 x float> poison, float %chunk.c14, i32 0
  %461 = insertelement <2 x float> %460, float %chunk.c15, i32 1
  %462 = fptrunc <2 x float> %461 to <2 x half>
  %463 = add i32 %out.lds.b0, 2352
  %464 = getelementptr i8, ptr addrspace(3) @lds, i32 %463
  store <2 x half> %462, ptr addrspace(3) %464, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %465 = zext i32 %y_bytes to i64
  %y.image = mul i32 %n, %y_stride_n
  %out.v0 = add i32 %tid.x, 0
  %466 = urem i32 %out.v0, 8
  %467 = udiv i32 %out.v0, 8
  %468 = udiv i32 %467, 16
  %469 = add i32 %oh0, %468
  %470 = urem i32 %467, 16
  %471 = add i32 %ow0, %470
  %472 = mul i32 %466, 8
  %473 = add i32 %k.base, %472
  %474 = icmp ult i32 %469, %Ho
  %475 = icmp ult i32 %471, %Wo
  %476 = icmp ult i32 %473, %K
  %477 = and i1 %475, %476
  %478 = and i1 %474, %477
  %479 = mul i32 %467, 72
  %480 = mul i32 %466, 8
  %481 = add i32 %479, %480
  %482 = mul i32 %481, 2
  %483 = getelementptr i8, ptr addrspace(3) @lds, i32 %482
  %484 = load <8 x half>, ptr addrspace(3) %483, align 16
  %485 = mul i32 %469, %y_stride_h
  %486 = mul i32 %471, %y_stride_w
  %487 = add i32 %485, %486
  %488 = add i32 %y.image, %487
  %489 = add i32 %488, %473
  %490 = mul i32 %489, 2
  %491 = select i1 %478, i32 %490, i32 2130706432
  %492 = zext i32 %491 to i64
  %493 = add i64 %492, 16
  %in.range8 = icmp ule i64 %493, %465
  %494 = getelementptr i8, ptr addrspace(1) %y, i64 %492
  br i1 %in.range8, label %gstore.then, label %gstore.end

stage.tail.then2:
  %495 = add i32 %x.goff2, %c.off1
  %496 = add i32 %386, %x.lds2
  %497 = getelementptr i8, ptr addrspace(3) @lds, i32 %496
  %498 = zext i32 %495 to i64
  %499 = add i64 %498, 16
  %in.range9 = icmp ule i64 %499, %14
  %500 = getelementptr i8, ptr addrspace(1) %x, i64 %498
  %501 = select i1 %in.range9, ptr addrspace(1) %500, ptr addrspace(1) %x
  %502 = select i1 %in.range9, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %497, ptr addrspace(1) %501, i32 %502)
  br label %stage.tail.end2

stage.tail.end2:
  %503 = add i32 %w.goff0, %c.off1
  %504 = add i32 %388, %w.lds0
  %505 = getelementptr i8, ptr addrspace(3) @lds, i32 %504
  %506 = zext i32 %503 to i64
  %507 = add i64 %506, 16
  %in.range10 = icmp ule i64 %507, %15
  %508 = getelementptr i8, ptr addrspace(1) %w, i64 %506
  %509 = select i1 %in.range10, ptr addrspace(1) %508, ptr addrspace(1) %w
  %510 = select i1 %in.range10, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %505, ptr addrspace(1) %509, i32 %510)
  %511 = add i32 %w.goff1, %c.off1
  %512 = add i32 %388, %w.lds1
  %513 = getelementptr i8, ptr addrspace(3) @lds, i32 %512
  %514 = zext i32 %511 to i64
  %515 = add i64 %514, 16
  %in.range11 = icmp ule i64 %515, %15
  %516 = getelementptr i8, ptr addrspace(1) %w, i64 %514
  %517 = select i1 %in.range11, ptr addrspace(1) %516, ptr addrspace(1) %w
  %518 = select i1 %in.range11, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %513, ptr addrspace(1) %517, i32 %518)
  br i1 %135, label %stage.tail.then3, label %stage.tail.end3

stage.tail.then3:
  %519 = add i32 %w.goff2, %c.off1
  %520 = add i32 %388, %w.lds2
  %521 = getelementptr i8, ptr addrspace(3) @lds, i32 %520
  %522 = zext i32 %519 to i64
  %523 = add i64 %522, 16
  %in.range12 = icmp ule i64 %523, %15
  %524 = getelementptr i8, ptr addrspace(1) %w, i64 %522
  %525 = select i1 %in.range12, ptr addrspace(1) %524, ptr addrspace(1) %w
  %526 = select i1 %in.range12, i32 16, i32 0
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %521, ptr addrspace(1) %525, i32 %526)
  br label %stage.tail.end3

stage.tail.end3:
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 1)
  %chunk.next = add i32 %chunk.iv, 1
  br label %chunk.header

gstore.then:
  store <8 x half> %484, ptr addrspace(1) %494, align 16
  br label %gstore.end

gstore.end:
  %out.v1 = add i32 %tid.x, 512
  %527 = urem i32 %out.v1, 8
  %528 = udiv i32 %out.v1, 8
  %529 = udiv i32 %528, 16
  %530 = add i32 %oh0, %529
  %531 = urem i32 %528, 16
  %532 = add i32 %ow0, %531
  %533 = mul i32 %527, 8
  %534 = add i32 %k.base, %533
  %535 = icmp ult i32 %530, %Ho
  %536 = icmp ult i32 %532, %Wo
  %537 = icmp ult i32 %534, %K
  %538 = and i1 %536, %537
  %539 = and i1 %535, %538
  %540 = mul i32 %528, 72
  %541 = mul i32 %527, 8
  %542 = add i32 %540, %541
  %543 = mul i32 %542, 2
  %544 = getelementptr i8, ptr addrspace(3) @lds, i32 %543
  %545 = load <8 x half>, ptr addrspace(3) %544, align 16
  %546 = mul i32 %530, %y_stride_h
  %547 = mul i32 %532, %y_stride_w
  %548 = add i32 %546, %547
  %549 = add i32 %y.image, %548
  %550 = add i32 %549, %534
  %551 = mul i32 %550, 2
  %552 = select i1 %539, i32 %551, i32 2130706432
  %553 = zext i32 %552 to i64
  %554 = add i64 %553, 16
  %in.range13 = icmp ule i64 %554, %465
  %555 = getelementptr i8, ptr addrspace(1) %y, i64 %553
  br i1 %in.range13, label %gstore.then1, label %gstore.end1

gstore.then1:
  store <8 x half> %545, ptr addrspace(1) %555, align 16
  br label %gstore.end1

gstore.end1:
  ret void
}

attributes #0 = { "nvvm.maxntid"="512,1,1" }
