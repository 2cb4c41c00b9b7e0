/**
 * The inverse of {@link kernelName}: bench rows name their candidates by kernel name only, and the
 * ranker's fit needs the spec behind each name.
 */
import { DTYPES } from '../problem.js';
import { kernelName, parseSpec, VARIANTS, type SpecResult } from '../spec.js';
import { ATOM_NAMES, TARGET_NAMES } from '../targets.js';

const alt = (names: readonly string[]) => names.map((n) => n.replace(/[^a-z0-9]/gi, (c) => `\\${c}`)).join('|');

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
    'wgm(?<wgm>\\d+)(?:_iglp(?<iglp>\\d+))?(?:_we(?<we>\\d+))?(?:_gm(?<gm>\\d+))?(?:_n(?<tn>\\d+))?(?:_ct(?<ct>\\d+))?(?<kt>_kt)?(?<whole>_wm)?$',
  ].join('_'),
);

/**
 * Reads a kernel name back into its spec. The name carries every field behind its own tag, so the
 * spec is exact; the result is checked by the strict schema and by naming it again.
 */
export function specFromKernelName(name: string): SpecResult {
  const m = NAME.exec(name);
  if (!m) return { ok: false, reason: `'${name}' is not a conv-direct kernel name` };
  const g = m.groups!;
  const n = (k: string) => Number(g[k]);
  const opt = (k: string) => (g[k] === undefined ? null : Number(g[k]));
  const spec = {
    variant: g['variant'],
    target: g['target'],
    dtype: g['dtype'],
    R: n('R'),
    S: n('S'),
    stride_h: n('sh'),
    stride_w: n('sw'),
    pad_h: n('ph'),
    pad_w: n('pw'),
    dilation_h: opt('dh') ?? 1,
    dilation_w: opt('dw') ?? 1,
    tile_h: n('th'),
    tile_w: n('tw'),
    tile_k: n('tk'),
    ck: n('ck'),
    waves_m: n('wm'),
    waves_n: n('wn'),
    atom: g['atom'],
    lds_pad: n('lp'),
    double_buffer: g['db'] !== undefined,
    chiplet_swizzle: g['cs'] === '1',
    num_xcds: n('xcds'),
    chiplet_chunk: n('chunk'),
    swizzle_wgm: n('wgm'),
    iglp: opt('iglp'),
    waves_per_eu: opt('we'),
    group_merge: opt('gm') ?? 1,
    tile_n: opt('tn') ?? 1,
    c_tail: opt('ct') ?? 0,
    k_tail: g['kt'] !== undefined,
    ...(g['whole'] !== undefined ? { whole_map: true } : {}),
  };
  const parsed = parseSpec(spec);
  if (!parsed.ok) return parsed;
  if (kernelName(parsed.spec) !== name) return { ok: false, reason: `'${name}' does not name its spec canonically (it reads back as ${kernelName(parsed.spec)})` };
  return parsed;
}
