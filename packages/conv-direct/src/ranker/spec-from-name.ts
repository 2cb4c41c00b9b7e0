/**
 * The inverse of {@link kernelName}: bench rows name their candidates by kernel name only, and the
 * ranker's fit needs the spec behind each name.
 */
import { ACTIVATIONS, type Activation, type Epilogue } from '@rocke/ir';
import { DTYPES } from '../problem.js';
import { kernelName, parseSpec, VARIANTS, type SpecResult } from '../spec.js';
import { ATOM_NAMES, TARGET_NAMES } from '../targets.js';

const alt = (names: readonly string[]) => names.map((n) => n.replace(/[^a-z0-9]/gi, (c) => `\\${c}`)).join('|');

/** Activations by the tag a fused kernel's name spells them with (@rocke/ir's `epilogueTag`: `leaky_relu` is `leakyrelu`). */
const ACTIVATION_BY_TAG = new Map<string, Activation>(ACTIVATIONS.map((a) => [a.replace('_', ''), a]));

const NAME = new RegExp(
  [
    '^rocke_direct',
    `(?<variant>${alt(VARIANTS)})`,
    `(?<target>${alt(TARGET_NAMES)})`,
    `(?<dtype>${alt(DTYPES)})`,
    'r(?<R>\\d+)s(?<S>\\d+)',
    'u(?<sh>\\d+)v(?<sw>\\d+)',
    'p(?<ph>\\d+)q(?<pw>\\d+)(?:_l(?<dh>\\d+)j(?<dw>\\d+))?',
    't(?<th>\\d+)x(?<tw>\\d+)x(?<tk>\\d+)',
    'ck(?<ck>\\d+)',
    'w(?<wm>\\d+)x(?<wn>\\d+)',
    `a(?<atom>${alt(ATOM_NAMES)})`,
    'lp(?<lp>\\d+)(?<db>_db)?',
    'cs(?<cs>[01])x(?<xcds>\\d+)x(?<chunk>\\d+)',
    'wgm(?<wgm>\\d+)(?:_iglp(?<iglp>\\d+))?(?:_we(?<we>\\d+))?(?:_gm(?<gm>\\d+))?(?:_n(?<tn>\\d+))?(?:_ct(?<ct>\\d+))?(?<kt>_kt)?(?<whole>_wm)?(?<ring>_wr)?(?<fold>_fs)?(?<dma>_ldma)?(?:_st(?<stw>\\d+)x(?<stc>\\d+))?' +
      `(?:_ep(?<act>${alt([...ACTIVATION_BY_TAG.keys()])})(?:_(?<bias>b32|bd))?(?<res>_res)?)?$`,
  ].join('_'),
);

/** Numeric spec fields, each read from its group of {@link NAME}. */
const NUMBER_FIELDS = {
  R: 'R', S: 'S', stride_h: 'sh', stride_w: 'sw', pad_h: 'ph', pad_w: 'pw', tile_h: 'th', tile_w: 'tw', tile_k: 'tk',
  ck: 'ck', waves_m: 'wm', waves_n: 'wn', lds_pad: 'lp', num_xcds: 'xcds', chiplet_chunk: 'chunk', swizzle_wgm: 'wgm',
} as const;

/** Numeric fields that `kernelName` writes only when they differ from their default: [group, default]. */
const OPTIONAL_FIELDS = {
  dilation_h: ['dh', 1], dilation_w: ['dw', 1], iglp: ['iglp', null], waves_per_eu: ['we', null], group_merge: ['gm', 1], tile_n: ['tn', 1], c_tail: ['ct', 0],
} as const;

/**
 * Reads a kernel name back into its spec. The name carries every field behind its own tag, so the
 * spec is exact; the result is checked by the strict schema and by naming it again.
 */
export function specFromKernelName(name: string): SpecResult {
  const m = NAME.exec(name);
  if (!m) return { ok: false, reason: `'${name}' is not a conv-direct kernel name` };
  const g = m.groups!;
  const spec = {
    variant: g['variant'],
    target: g['target'],
    dtype: g['dtype'],
    atom: g['atom'],
    double_buffer: g['db'] !== undefined,
    chiplet_swizzle: g['cs'] === '1',
    k_tail: g['kt'] !== undefined,
    ...Object.fromEntries(Object.entries(NUMBER_FIELDS).map(([field, group]) => [field, Number(g[group])])),
    ...Object.fromEntries(Object.entries(OPTIONAL_FIELDS).map(([field, [group, absent]]) => [field, g[group] === undefined ? absent : Number(g[group])])),
    ...(g['whole'] !== undefined ? { whole_map: true } : {}),
    ...(g['ring'] !== undefined ? { weight_ring: true } : {}),
    ...(g['fold'] !== undefined ? { fold_s: true } : {}),
    ...(g['dma'] !== undefined ? { lds_dma: true } : {}),
    ...(g['stw'] !== undefined ? { stream: { workgroups: Number(g['stw']), chunks: Number(g['stc']) } } : {}),
    ...(g['act'] !== undefined ? { epilogue: epilogueOf(g['act'], g['bias'], g['res'] !== undefined) } : {}),
  };
  const parsed = parseSpec(spec);
  if (!parsed.ok) return parsed;
  if (kernelName(parsed.spec) !== name) return { ok: false, reason: `'${name}' does not name its spec canonically (it reads back as ${kernelName(parsed.spec)})` };
  return parsed;
}

/** The fused epilogue a name's `ep...` tag spells (a bare one written out fails the canonical check). */
function epilogueOf(act: string, bias: string | undefined, residual: boolean): Epilogue {
  return { act: ACTIVATION_BY_TAG.get(act)!, bias: bias === 'b32' ? 'fp32' : bias === 'bd' ? 'dtype' : 'none', residual };
}
