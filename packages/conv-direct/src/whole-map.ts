/**
 * Whole-map tiles (spec field `whole_map`, sm_90a warpgroup MMA): one workgroup holds every pixel
 * of tile_n images' output maps, so on tiny maps (4×4, 7×7) each weight byte is read once per
 * tile_n images and no 8×8 m-block pads a 4×4 map. The wgmma's N dimension runs over pixels
 * (weights are the A operand, M = 64 output channels), and the pixels are "flat": the staged input
 * is one sequence of positions, `pitchW` per row and `pitchH` rows per image, in which the zero
 * padding between two rows (and two images) is shared. Output pixel (n, oh, ow) is position
 * `(n·pitchH + oh)·pitchW + ow`, and at stride 1 its tap (r, s) reads staged position
 * `output + r·dilation_h·pitchW + s·dilation_w`: one constant offset per tap, so the B operand of a
 * tap is a run of consecutive positions (8 of them per core matrix) and a tap only moves the
 * descriptor's start. Positions between rows and images are computed and dropped at the store.
 */

/** The spec fields the flat layout reads (a Spec has them; spec.ts builds on this module). */
export interface WholeMapFields {
  readonly R: number;
  readonly S: number;
  readonly pad_h: number;
  readonly pad_w: number;
  readonly dilation_h: number;
  readonly dilation_w: number;
  readonly tile_h: number;
  readonly tile_w: number;
  readonly tile_k: number;
  readonly tile_n: number;
  readonly waves_m: number;
  readonly whole_map?: true;
}

/** Largest N of one m64nNk16 (pixels per wgmma). */
const WGMMA_MAX_PIXELS = 256;
const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** The flat layout of a whole-map spec's staged input and output positions. */
export interface WholeMapLayout {
  /** Positions per staged row: tile_w plus the wider of the two paddings a row's reads reach. */
  readonly pitchW: number;
  /** Rows per image (the same for the bottom padding an image's reads reach and the top padding). */
  readonly pitchH: number;
  /** Staged positions before output position 0 (the first image's top and left padding). */
  readonly lead: number;
  /** Output positions spanned from the first image's first pixel to the last image's last. */
  readonly outputs: number;
  /** Pixel columns each warpgroup computes: `outputs` rounded up to whole 8-pixel core matrices. */
  readonly pixels: number;
  /** wgmma N of each pixel run (≤ 256 each, multiples of 8), in order. */
  readonly runs: readonly number[];
  /** Positions one stage holds: every position a tap of the last pixel column reads. */
  readonly staged: number;
  /** Output channels per warpgroup and M-blocks of 64 of them. */
  readonly channelsPerGroup: number;
  readonly mBlocksPerGroup: number;
}

/**
 * The flat layout of a whole-map spec. Row padding: the left padding of a row's first pixel reads
 * the previous row's last `pad_w` positions, the right reach of its last pixel
 * (`(S−1)·dilation_w − pad_w`) reads past tile_w; a pitch of tile_w plus the larger of the two
 * keeps both on positions no input pixel occupies (the staging zero-fills them). Likewise for rows
 * per image. Stride 1 only (validated): other strides have no constant offset per tap.
 */
export function wholeMapLayout(spec: WholeMapFields): WholeMapLayout {
  const reachW = (spec.S - 1) * spec.dilation_w;
  const reachH = (spec.R - 1) * spec.dilation_h;
  const pitchW = spec.tile_w + Math.max(spec.pad_w, reachW - spec.pad_w);
  const pitchH = spec.tile_h + Math.max(spec.pad_h, reachH - spec.pad_h);
  const lead = spec.pad_h * pitchW + spec.pad_w;
  const outputs = (spec.tile_n - 1) * pitchH * pitchW + (spec.tile_h - 1) * pitchW + spec.tile_w;
  const pixels = roundUp(outputs, 8);
  const runs: number[] = [];
  for (let left = pixels; left > 0; left -= WGMMA_MAX_PIXELS) runs.push(Math.min(left, WGMMA_MAX_PIXELS));
  const staged = roundUp(pixels + reachH * pitchW + reachW, 8);
  const channelsPerGroup = spec.tile_k / spec.waves_m;
  return { pitchW, pitchH, lead, outputs, pixels, runs, staged, channelsPerGroup, mBlocksPerGroup: channelsPerGroup / 64 };
}

/**
 * Images per whole-map tile for a problem with an Ho×Wo map: every image in one tile when the flat
 * pixels fit `maxPixels`, else as few image tiles as fit, balanced (N 10 at most 4 per tile: 4, 3,
 * 3 → tile_n 4 would leave the last tile half empty; ceil(10 / 3) = 4 is what three tiles need).
 * Each extra image tile reads every weight byte once more, so fewer is the point; undefined when one
 * image alone does not fit.
 */
export function wholeMapImages(Ho: number, Wo: number, N: number, spec: Pick<WholeMapFields, 'R' | 'S' | 'pad_h' | 'pad_w' | 'dilation_h' | 'dilation_w'>, maxPixels: number): number | undefined {
  const pixelsOf = (tile_n: number) => wholeMapLayout({ ...spec, tile_h: Ho, tile_w: Wo, tile_n, tile_k: 64, waves_m: 1 }).pixels;
  let fit = 0;
  while (fit < N && pixelsOf(fit + 1) <= maxPixels) fit++;
  if (fit === 0) return undefined;
  return Math.ceil(N / Math.ceil(N / fit));
}
